// ggufs._ggufs: the in-process adapter, as thin as the FUSE one (src/daemon/fuse_adapter.cpp).
// A Mount is what `ggufs SOURCE MNT` serves (open_served): its Library, walked by path instead
// of by inode, read through the same ContentReader. The Python package (src/python/ggufs/)
// builds the API on these few calls; nothing here knows a file format.
//
// Reads release the GIL. A read larger than one chunk is cut into chunks that workers started
// for the call and the calling thread take in turn; the calling thread polls for signals
// between its chunks (PyErr_CheckSignals), so KeyboardInterrupt stops a long decode.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "ggufs/content.h"
#include "ggufs/decode.h"
#include "ggufs/error.h"
#include "ggufs/ggml_type.h"
#include "ggufs/library.h"
#include "ggufs/names.h"
#include "ggufs/open.h"
#include "ggufs/tree.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace ggufs {
namespace {

PyObject* g_gguf_error = nullptr;        // ggufs.GGUFError(ValueError)
PyObject* g_read_error = nullptr;        // ggufs.ReadError(OSError)
PyObject* g_view_unavailable = nullptr;  // ggufs.ViewUnavailable(LookupError)

[[noreturn]] void raise(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw nb::python_error();
}

// OSError subclasses built as the OS would: (errno, strerror, path), so `e.errno` and
// `e.filename` are set.
[[noreturn]] void raise_os(PyObject* type, int err, std::string_view path) {
  PyObject* e = PyObject_CallFunction(type, "isN", err, std::strerror(err),
                                      PyUnicode_DecodeFSDefaultAndSize(path.data(), path.size()));
  if (e) {
    PyErr_SetObject(type, e);
    Py_DECREF(e);
  }
  throw nb::python_error();
}

// ReadError(EIO, `what`): a read the mount would fail with EIO.
void set_read_error(const char* what) {
  PyObject* err = PyObject_CallFunction(g_read_error, "is", EIO, printable(what).c_str());
  if (err) {
    PyErr_SetObject(g_read_error, err);
    Py_DECREF(err);
  }
}

// The one-line messages of the daemon as Python exceptions (the README's table).
void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const ParseError& e) {
    const std::string line = e.line();
    PyObject* err = PyObject_CallFunction(g_gguf_error, "s", line.c_str());
    if (!err) return;
    PyObject* file = PyUnicode_DecodeFSDefault(e.file().c_str());
    PyObject* offset = PyLong_FromUnsignedLongLong(e.offset());
    PyObject* problem = PyUnicode_FromString(printable(e.problem()).c_str());
    if (file && offset && problem) {
      PyObject_SetAttrString(err, "file", file);
      PyObject_SetAttrString(err, "offset", offset);
      PyObject_SetAttrString(err, "problem", problem);
    }
    Py_XDECREF(file);
    Py_XDECREF(offset);
    Py_XDECREF(problem);
    PyErr_SetObject(g_gguf_error, err);
    Py_DECREF(err);
  } catch (const IoError& e) {
    // The daemon's line, as the OS's own exception where it names the cause.
    if (e.os_error() == ENOENT || e.os_error() == EACCES || e.os_error() == EPERM) {
      PyObject* type = e.os_error() == ENOENT ? PyExc_FileNotFoundError : PyExc_PermissionError;
      PyObject* err = PyObject_CallFunction(type, "is", e.os_error(), printable(e.what()).c_str());
      if (err) {
        PyErr_SetObject(type, err);
        Py_DECREF(err);
      }
      return;
    }
    set_read_error(e.what());
  } catch (const UnrepresentableError& e) {
    set_read_error(e.what());
  } catch (const UsageError& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  }
}

// A parsed metadata value as Python: integers, floats, bools and strings as themselves (a string
// that is not UTF-8 as bytes); a numeric array as (numpy dtype string, bytes), which the package
// turns into a read-only NumPy array; an array of strings or of arrays as a list.
nb::object to_python(const Value& v);

// A name (of a file, a tensor, a metadata key) as Python gives os.listdir's: str, any byte that
// is not UTF-8 kept as a surrogate (PEP 383's surrogateescape; os.fsencode gives it back).
nb::str fs_str(std::string_view s) {
  return nb::steal<nb::str>(PyUnicode_DecodeFSDefaultAndSize(s.data(), s.size()));
}

// A path from Python (os.fsencode'd by the package).
std::string_view path_of(const nb::bytes& b) { return {b.c_str(), b.size()}; }

nb::object string_object(std::string_view s) {
  if (is_utf8(s)) return nb::str(s.data(), s.size());
  return nb::bytes(s.data(), s.size());
}

const char* numpy_dtype(ValueType t) {
  switch (t) {
    case ValueType::kUint8:
      return "<u1";
    case ValueType::kInt8:
      return "<i1";
    case ValueType::kUint16:
      return "<u2";
    case ValueType::kInt16:
      return "<i2";
    case ValueType::kUint32:
      return "<u4";
    case ValueType::kInt32:
      return "<i4";
    case ValueType::kFloat32:
      return "<f4";
    case ValueType::kBool:
      return "?";
    case ValueType::kUint64:
      return "<u8";
    case ValueType::kInt64:
      return "<i8";
    case ValueType::kFloat64:
      return "<f8";
    default:
      return nullptr;
  }
}

nb::object array_object(const Array& a) {
  if (a.elem_type() == ValueType::kString) {
    nb::list out;
    for (std::size_t i = 0; i < a.size(); ++i) out.append(string_object(a.string_at(i)));
    return out;
  }
  if (a.elem_type() == ValueType::kArray) {
    nb::list out;
    for (std::size_t i = 0; i < a.size(); ++i) out.append(array_object(a.array_at(i)));
    return out;
  }
  // Packed little-endian elements of the spec's width (metadata is held in host order).
  std::size_t width = 1;
  switch (a.elem_type()) {
    case ValueType::kUint16:
    case ValueType::kInt16:
      width = 2;
      break;
    case ValueType::kUint32:
    case ValueType::kInt32:
    case ValueType::kFloat32:
      width = 4;
      break;
    case ValueType::kUint64:
    case ValueType::kInt64:
    case ValueType::kFloat64:
      width = 8;
      break;
    default:
      break;
  }
  std::string bytes(a.size() * width, '\0');
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::uint64_t bits = Array::scalar_bits(a.at(i));
    std::memcpy(bytes.data() + i * width, &bits, width);  // little-endian host
  }
  return nb::make_tuple(numpy_dtype(a.elem_type()), nb::bytes(bytes.data(), bytes.size()));
}

nb::object to_python(const Value& v) {
  return std::visit(
      [](const auto& x) -> nb::object {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return string_object(x);
        } else if constexpr (std::is_same_v<T, Array>) {
          return array_object(x);
        } else if constexpr (std::is_same_v<T, bool>) {
          return nb::bool_(x);
        } else if constexpr (std::is_floating_point_v<T>) {
          return nb::float_(static_cast<double>(x));
        } else {
          return nb::int_(x);
        }
      },
      v.data);
}

// Runs job(k) for every k < n: on `workers` threads started for the call and on the calling
// thread, which (holding no GIL) re-takes it every 50 ms to let Python handle signals; a signal
// handler's exception stops the remaining chunks and is raised once the started ones end. The
// first exception a chunk throws is rethrown the same way.
void run_chunks(std::size_t n, unsigned workers, const std::function<void(std::size_t)>& job) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::exception_ptr error;
  // Takes the next chunk and does it; false when none is left or the call stops.
  const auto take = [&] {
    std::size_t k = 0;
    if (stop.load(std::memory_order_relaxed) || (k = next++) >= n) return false;
    try {
      job(k);
    } catch (...) {
      const std::lock_guard lock(mu);
      if (!error) error = std::current_exception();
      stop = true;
    }
    return true;
  };
  const auto work = [&] {
    while (take()) {
    }
  };
  bool interrupted = false;
  {
    nb::gil_scoped_release release;
    std::vector<std::thread> threads;
    const unsigned extra = static_cast<unsigned>(std::min<std::size_t>(workers, n) - 1);
    try {
      for (unsigned i = 0; i < extra; ++i) threads.emplace_back(work);
    } catch (const std::system_error&) {
      // No thread to spare: the calling thread does every chunk.
    }
    auto polled = std::chrono::steady_clock::now();
    while (take()) {
      if (std::chrono::steady_clock::now() - polled > std::chrono::milliseconds(50)) {
        nb::gil_scoped_acquire acquire;
        if (PyErr_CheckSignals() != 0) {
          interrupted = true;
          stop = true;
        }
        polled = std::chrono::steady_clock::now();
      }
    }
    for (std::thread& t : threads) t.join();
  }
  if (interrupted) throw nb::python_error();
  if (error) std::rethrow_exception(error);
}

// The per-tensor views' rows Model.tensor reads through, bfloat16 included, which the mount has
// no folder for (its bfloat16 is hf/'s, read by the same ContentReader path).
constexpr TensorView kBFloat16View{"bf16", "", ViewData::kBFloat16, false};

class Mount {
 public:
  Mount(const std::string& source, const OpenOptions& options) {
    nb::gil_scoped_release release;
    library_ = open_served(source, options, warnings_, {}, &metadata_);
    const Library::Found root = library_->find(kRootIno);
    single_ = root.model != nullptr && library_->folder_names().empty() ? root.model : nullptr;
  }

  const std::vector<std::string>& warnings() const { return warnings_; }
  bool is_library() const { return single_ == nullptr; }

  // The node at `path` ('/'-separated below the root; "" or "/" the root). Walked without the
  // GIL: a library's lookup opens and parses the model whose folder it enters.
  Library::Found find(const nb::bytes& bytes) const {
    const std::string_view path = path_of(bytes);
    int err = 0;
    Library::Found found;
    {
      nb::gil_scoped_release release;
      Ino ino = kRootIno;
      std::size_t at = 0;
      while (err == 0 && at < path.size()) {
        std::size_t end = path.find('/', at);
        if (end == std::string_view::npos) end = path.size();
        const std::string_view name = path.substr(at, end - at);
        at = end + 1;
        if (name.empty() || name == ".") continue;
        if (library_->find(ino).node->kind != NodeKind::kDirectory) {
          err = ENOTDIR;
        } else if ((ino = name == ".." ? library_->parent(ino) : library_->lookup(ino, name)) ==
                   0) {
          err = ENOENT;
        }
      }
      if (err == 0) found = library_->find(ino);
    }
    if (err == ENOTDIR) raise_os(PyExc_NotADirectoryError, ENOTDIR, path);
    if (err == ENOENT) raise_os(PyExc_FileNotFoundError, ENOENT, path);
    return found;
  }

  nb::list listdir(const nb::bytes& path) const {
    const Library::Found f = find(path);
    if (f.node->kind != NodeKind::kDirectory) {
      raise_os(PyExc_NotADirectoryError, ENOTDIR, path_of(path));
    }
    nb::list out;
    for (const Ino child : f.node->children) {
      out.append(fs_str(library_->find(f.global(child), /*open=*/false).node->name));
    }
    return out;
  }

  // (is_dir, st_size in bytes, st_mtime in ns), as the mount's stat gives them.
  nb::tuple stat(const nb::bytes& path) const {
    const Library::Found f = find(path);
    const std::int64_t ns =
        static_cast<std::int64_t>(f.mtime.tv_sec) * 1000000000 + f.mtime.tv_nsec;
    const bool dir = f.node->kind == NodeKind::kDirectory;
    return nb::make_tuple(dir, dir ? 0 : f.node->size, ns);
  }

  nb::list xattrs(const nb::bytes& path) const {
    nb::list out;
    for (const auto& [key, value] : node_xattrs(find(path))) {
      out.append(nb::make_tuple(fs_str(key), nb::bytes(value.data(), value.size())));
    }
    return out;
  }

  // Bytes [offset, offset + out.nbytes) of the file at `path` (clipped to its size) into `out`;
  // returns the count. Read by one thread, or in chunks by up to `threads`.
  std::size_t readinto(const nb::bytes& path, std::uint64_t offset,
                       nb::ndarray<nb::c_contig, nb::device::cpu> out, unsigned threads) const {
    const Library::Found f = find(path);
    if (f.node->kind == NodeKind::kDirectory) {
      raise_os(PyExc_IsADirectoryError, EISDIR, path_of(path));
    }
    return read_node(*f.node, f.model->reader, offset, static_cast<char*>(out.data()), out.nbytes(),
                     threads);
  }

  // The model's tensors: (name, ggml type name, ne, absolute byte offset, stored bytes or -1, the
  // path of the file holding it, whether it decodes to float32).
  nb::list tensors() const {
    nb::list out;
    if (!single_) return out;
    const GgufFile& file = single_->model.file;
    for (const TensorInfo& t : file.tensors) {
      const TypeTraits* tr = type_traits(t.type);
      nb::list ne;
      for (std::uint32_t d = 0; d < t.n_dims; ++d) ne.append(t.ne[d]);
      const std::string type =
          tr && !tr->name.empty() ? std::string(tr->name) : "type_" + std::to_string(t.type);
      out.append(
          nb::make_tuple(fs_str(t.name), nb::str(type.c_str()), nb::tuple(ne), t.file_offset,
                         t.n_bytes ? static_cast<std::int64_t>(*t.n_bytes) : std::int64_t{-1},
                         fs_str(single_->file_paths.at(t.shard)), decodes_to_f32(file, t)));
    }
    return out;
  }

  // Tensor `index`'s elements in form `dtype` ("float32", "float16", "bfloat16", "stored") into
  // `out`, which must hold exactly their bytes; by up to `threads`.
  void tensor_into(std::size_t index, std::string_view dtype,
                   nb::ndarray<nb::c_contig, nb::device::cpu> out, unsigned threads) const {
    const Node node = tensor_node(index, dtype);
    if (out.nbytes() != node.size) {
      raise(PyExc_ValueError, "out holds " + std::to_string(out.nbytes()) + " bytes; the tensor " +
                                  std::to_string(node.size));
    }
    read_node(node, single_->reader, 0, static_cast<char*>(out.data()), out.nbytes(), threads);
  }

  // Where tensor `index`'s stored bytes lie in a local file, (descriptor, byte offset, bytes), for
  // a read-only map of them; None for a remote file.
  nb::object stored_extent(std::size_t index) const {
    const Node node = tensor_node(index, "stored");
    const auto ext = single_->reader.stored_extent(node, node.size, 0);
    if (!ext) return nb::none();
    return nb::make_tuple(ext->fd, ext->offset, ext->size);
  }

  // The parsed metadata (key, value) pairs, in file order (to_python), taken once: the mount
  // keeps only their rendered files.
  nb::list metadata() const {
    nb::list out;
    if (!single_) return out;
    for (const KeyValue& kv : metadata_) {
      out.append(nb::make_tuple(fs_str(kv.key), to_python(kv.value)));
    }
    return out;
  }

 private:
  Node tensor_node(std::size_t index, std::string_view dtype) const {
    if (!single_) raise(PyExc_ValueError, "a library has no tensors of its own");
    const GgufFile& file = single_->model.file;
    const TensorInfo& t = file.tensors.at(index);
    Node n;
    n.name = t.name;
    n.tensor = index;
    if (dtype == "stored") {
      if (!t.n_bytes) {
        raise(PyExc_ValueError, printable(t.name) + ": its type id " + std::to_string(t.type) +
                                    " is not one ggml has: its size is unknown");
      }
      n.kind = NodeKind::kRaw;
      n.view = &kTensorViews[0];
      n.size = *t.n_bytes;
      return n;
    }
    n.view = dtype == "float32"   ? &kTensorViews[1]
             : dtype == "float16" ? &kTensorViews[3]
             : dtype == "bfloat16"
                 ? &kBFloat16View
                 : (raise(PyExc_ValueError, "dtype must be float32, float16, bfloat16 or stored"),
                    nullptr);
    if (!decodes_to_f32(file, t)) {
      raise(PyExc_ValueError,
            printable(t.name) + ": ggufs does not decode its type to floats (raw/ only)");
    }
    n.kind = NodeKind::kDecoded;
    n.size = t.n_elements * n.view->element_bytes();
    return n;
  }

  // Reads of at least 32 MiB a chunk stream their output past the caches (kStreamingMinBytes).
  // Smaller reads split into at least four chunks a thread, of 64 KiB to 4 MiB: a few output
  // bytes can cost many input bytes (mlx/'s scales and biases read a whole block per group), so
  // one 4 MiB chunk would leave the other threads idle.
  static std::size_t read_node(const Node& node, const ContentReader& reader, std::uint64_t offset,
                               char* dst, std::size_t size, unsigned threads) {
    if (offset >= node.size) return 0;
    size = static_cast<std::size_t>(std::min<std::uint64_t>(size, node.size - offset));
    constexpr std::size_t kMinChunk = std::size_t{64} << 10, kMaxChunk = std::size_t{4} << 20;
    const std::size_t even =
        (size / (4 * std::size_t{std::max(1u, threads)}) + kMinChunk - 1) / kMinChunk * kMinChunk;
    const std::size_t chunk = size >= 2 * kStreamingMinBytes
                                  ? kStreamingMinBytes
                                  : std::clamp(even, kMinChunk, kMaxChunk);
    const std::size_t n = (size + chunk - 1) / chunk;
    run_chunks(n, std::max(1u, threads), [&](std::size_t k) {
      const std::size_t at = k * chunk, len = std::min(chunk, size - at);
      if (reader.read(node, dst + at, len, offset + at) != len) {
        throw IoError(printable(node.name) + ": a short read");
      }
    });
    return size;
  }

  std::unique_ptr<Library> library_;
  const ServedModel* single_ = nullptr;
  std::vector<std::string> warnings_;
  std::vector<KeyValue> metadata_;
};

// The mount's -o options by their names, as the Python keyword arguments give them.
OpenOptions open_options(const nb::dict& kwargs) {
  OpenOptions o;
  for (const auto& item : kwargs) {
    // Not a structured binding: clang before 16 cannot capture one in a lambda.
    const nb::handle v = item.second;
    const std::string key = nb::cast<std::string>(item.first);
    const auto text = [&] { return nb::cast<std::string>(nb::str(v)); };
    if (key == "hf_dtype") {
      o.tree.hf_dtype = parse_float_dtype(key, text());
    } else if (key == "mlx_dtype") {
      o.tree.mlx_dtype = parse_float_dtype(key, text());
    } else if (key == "safetensors_dtype") {
      o.tree.safetensors_dtype = parse_float_dtype(key, text());
    } else if (key == "hf_max_shard_size") {
      o.tree.hf_max_shard_size = parse_shard_size(text());
    } else if (key == "mlx_requantize") {
      o.tree.mlx_requantize = parse_mlx_requantize(nb::cast<std::uint64_t>(v));
    } else if (key == "mmproj") {
      o.mmproj = text();
    } else if (key == "cache_dir") {
      o.remote.cache_dir = text();
    } else if (key == "cache_size_mib") {
      o.remote.cache_limit_bytes = nb::cast<std::uint64_t>(v) << 20;
    } else if (key == "ca_file") {
      o.remote.ca_file = text();
    } else if (key == "token") {
      o.remote.bearer_token = text();
    } else if (key == "read_timeout") {
      const auto s = nb::cast<std::uint32_t>(v);
      if (s < 1 || s > 60) throw UsageError("read_timeout=" + text() + ": must be 1 to 60 seconds");
      o.remote.read_timeout_s = s;
    } else if (key == "s3_path_style") {
      o.remote.s3.path_style = nb::cast<bool>(v);
    } else if (key == "s3_virtual_host") {
      o.remote.s3.virtual_host = nb::cast<bool>(v);
    } else if (key == "s3_anonymous") {
      o.remote.s3.anonymous = nb::cast<bool>(v);
    } else {
      raise(PyExc_TypeError, "open() got an unexpected option '" + key + "'");
    }
  }
  if (o.remote.bearer_token.empty()) {
    if (const char* token = std::getenv("GGUFS_HTTP_TOKEN")) o.remote.bearer_token = token;
  }
  return o;
}

}  // namespace
}  // namespace ggufs

NB_MODULE(_ggufs, m) {
  using namespace ggufs;
  g_gguf_error = PyErr_NewException("ggufs.GGUFError", PyExc_ValueError, nullptr);
  g_read_error = PyErr_NewException("ggufs.ReadError", PyExc_OSError, nullptr);
  g_view_unavailable = PyErr_NewException("ggufs.ViewUnavailable", PyExc_LookupError, nullptr);
  m.attr("GGUFError") = nb::handle(g_gguf_error);
  m.attr("ReadError") = nb::handle(g_read_error);
  m.attr("ViewUnavailable") = nb::handle(g_view_unavailable);
  nb::register_exception_translator(translate);

  nb::class_<Mount>(m, "Mount")
      .def("__init__",
           [](Mount* self, const std::string& source, const nb::kwargs& kwargs) {
             new (self) Mount(source, open_options(kwargs));
           })
      .def_prop_ro("warnings", &Mount::warnings)
      .def_prop_ro("is_library", &Mount::is_library)
      .def("listdir", &Mount::listdir)
      .def("stat", &Mount::stat)
      .def("xattrs", &Mount::xattrs)
      .def("readinto", &Mount::readinto, "path"_a, "offset"_a, "out"_a.noconvert(), "threads"_a = 1)
      // noconvert: `out` is written in place; a copy nanobind made of a non-contiguous or
      // other-typed buffer would take the bytes instead (TypeError then).
      .def("tensors", &Mount::tensors)
      .def("tensor_into", &Mount::tensor_into, "index"_a, "dtype"_a, "out"_a.noconvert(),
           "threads"_a = 1)
      .def("stored_extent", &Mount::stored_extent)
      .def("metadata", &Mount::metadata);
  m.def("hardware_threads", [] { return std::max(1u, std::thread::hardware_concurrency()); });
}
