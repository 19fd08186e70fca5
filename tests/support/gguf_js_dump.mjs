// Parses a GGUF file with Hugging Face's JavaScript reader (@huggingface/gguf) and prints what it
// read as one JSON document, so a test can compare a second, independent reader's view of a file
// (for example one served by a mount) with the original's:
//   {"version": 3, "littleEndian": true, "tensorDataOffset": "…",
//    "metadata": {"general.architecture": {"type": 8, "value": "llama"}, …},
//    "tensorInfos": [{"name": "token_embd.weight", "n_dims": 2, "shape": ["64", "32000"],
//                     "dtype": 0, "offset": "0"}, …]}
// "type" (and "subType", an array's element type) is the GGUF value type number (0 uint8 … 12
// float64); the reader's own keys version, tensor_count and kv_count are in "metadata" too.
// Nothing is lost on the way to JSON: BigInts (64-bit integers, counts, shapes, offsets) are
// written as decimal strings, and the numbers JSON has no text for as the strings "NaN",
// "Infinity", "-Infinity" and "-0". Keys keep the file's order.
//
// Usage: node gguf_js_dump.mjs FILE.gguf
// The package is looked up in $GGUFS_TEST_NODE_MODULES, else where scripts/install-deps puts it.
// On error: a one-line message on stderr and exit code 1.
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

const kDefaultModules = "/var/cache/ggufs-tests/node/node_modules";

// ES modules ignore NODE_PATH, so the package is resolved from the install folder explicitly
// (a require rooted in that folder finds `<dir>/node_modules/x` and, when `dir` itself is a
// node_modules folder, `<dir>/x`).
async function importFrom(dir, name) {
  const require = createRequire(path.join(dir, "_resolve_from_here.js"));
  return import(pathToFileURL(require.resolve(name)).href);
}

function lossless(_key, value) {
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number") {
    if (Number.isNaN(value)) return "NaN";
    if (value === Infinity) return "Infinity";
    if (value === -Infinity) return "-Infinity";
    if (Object.is(value, -0)) return "-0";
  }
  return value;
}

async function main() {
  const file = process.argv[2];
  if (!file || process.argv.length > 3) throw new Error("usage: gguf_js_dump.mjs FILE.gguf");
  const modules = process.env.GGUFS_TEST_NODE_MODULES || kDefaultModules;
  const mod = await importFrom(modules, "@huggingface/gguf");
  // The package's require entry is CommonJS: its exports may come as the default export only.
  const gguf = mod.gguf ?? mod.default?.gguf;
  // An absolute path: the reader takes anything else for a URL.
  const parsed = await gguf(path.resolve(file), { allowLocalFile: true, typedMetadata: true });
  const out = {
    version: parsed.metadata.version,
    littleEndian: parsed.littleEndian,
    tensorDataOffset: parsed.tensorDataOffset,
    metadata: parsed.typedMetadata,
    tensorInfos: parsed.tensorInfos.map((t) => ({
      name: t.name,
      n_dims: t.n_dims,
      shape: t.shape,
      dtype: t.dtype,
      offset: t.offset,
    })),
  };
  process.stdout.write(JSON.stringify(out, lossless) + "\n");
}

main().catch((err) => {
  const message = String(err?.message ?? err).replace(/\s+/g, " ");
  process.stderr.write(`gguf_js_dump: ${message}\n`);
  process.exit(1);
});
