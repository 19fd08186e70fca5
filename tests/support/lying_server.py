#!/usr/bin/python3
"""A lying HTTP server for the remote-model tests (standard library only).

Serves one file (FILE) at any URL path on 127.0.0.1, honestly with byte ranges (206 with
Content-Range, Content-Length, ETag and Last-Modified; 200 with the whole file without a Range
header), except for the lie chosen with --lie, told to the requests it applies to:
  --after BYTES   lie only to requests whose range starts at or after BYTES (default 0)
  --count N       lie only N times, then be honest (default: forever; 0: never)
  --shift BYTES   how far shifted-range, no-content-range, wrong-end, wrong-total and long-body
                  move what they announce or send (default 4096)
  --log PATH      where the FTP listener (see redirect-ftp) logs every connection and command
  --port PORT     listen on PORT (default: any free port)
Lies:
  shifted-range     206 for the range --shift bytes later (earlier near the end of the file):
                    Content-Range and body both of that other range
  wrong-end         206 whose Content-Range ends --shift bytes past (or before, near the end) the
                    end asked; the body is the announced range
  wrong-total       206 whose Content-Range total is the size plus --shift; honest body
  no-content-range  206 without Content-Range; the body is the range --shift bytes later, so a
                    client that takes it as the range asked for gets wrong bytes
  short-close       Content-Length and Content-Range as asked, half the body, then the connection
                    closes
  short-length      Content-Length and Content-Range end for half the bytes asked, that half sent
  long-body         Content-Range as asked, --shift more body bytes (Content-Length counts them)
  gzip              Content-Encoding: gzip, the body gzip-compressed (Content-Length its size)
  redirect-ftp      302 to ftp://127.0.0.1:PORT2/file, PORT2 a listener of this script that logs
                    to --log whatever connects and what it says
  redirect-loop     302 to the same URL, forever
  etag-change       another ETag and Last-Modified (never on the first request served)
  silent            reads the request and sends nothing, until killed (or SIGUSR1)
  drip              honest headers, then the body at 4 bytes per second
  status-416        416 Range Not Satisfiable
  not-http          a line of something that is not HTTP, then the connection closes
SIGUSR1 makes the server honest from then on (held silent answers end with a closed
connection), so a test can check what a client cached while it lied against the same URL.
Prints its port on the first line of stdout, logs each request and the lie told to stderr, and
serves until SIGTERM.
"""
import argparse
import email.utils
import gzip
import http.server
import os
import signal
import socket
import socketserver
import sys
import threading
import time

LIES = ("shifted-range", "wrong-end", "wrong-total", "no-content-range", "short-close",
        "short-length", "long-body", "gzip", "redirect-ftp", "redirect-loop", "etag-change",
        "silent", "drip", "status-416", "not-http")

args = None
data = b""
etag = ""
last_modified = ""
ftp_port = 0
honest_now = threading.Event()
state_lock = threading.Lock()
lies_left = -1  # -1: forever
requests_served = 0


def log(msg):
    sys.stderr.write("lying_server: " + msg + "\n")
    sys.stderr.flush()


def parse_range(header, size):
    """(first, last) of a single "bytes=" range, clipped to the file, or None."""
    if not header or not header.startswith("bytes=") or "," in header:
        return None
    spec = header[6:].strip()
    first, _, last = spec.partition("-")
    try:
        if first == "":
            n = int(last)
            return (max(0, size - n), size - 1) if n > 0 and size > 0 else None
        a = int(first)
        b = int(last) if last else size - 1
    except ValueError:
        return None
    if a >= size or b < a:
        return None
    return a, min(b, size - 1)


def take_lie(start):
    """The lie to tell a request whose range starts at `start`, or None (honest)."""
    global lies_left, requests_served
    with state_lock:
        first_request = requests_served == 0
        requests_served += 1
        if not args.lie or honest_now.is_set() or start < args.after or lies_left == 0:
            return None
        if args.lie == "etag-change" and first_request:
            return None
        if lies_left > 0:
            lies_left -= 1
        return args.lie


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_HEAD(self):
        self.answer(head=True)

    def do_GET(self):
        self.answer(head=False)

    def headers_out(self, status, fields):
        self.send_response(status)
        for name, value in fields:
            self.send_header(name, value)
        self.end_headers()

    def identity(self, tag=None, modified=None):
        return [("ETag", tag or etag), ("Last-Modified", modified or last_modified),
                ("Accept-Ranges", "bytes")]

    def body(self, head, payload):
        if not head:
            self.wfile.write(payload)
            self.wfile.flush()

    def answer(self, head):
        size = len(data)
        rng_header = self.headers.get("Range", "")
        rng = parse_range(rng_header, size)
        start = rng[0] if rng else 0
        lie = take_lie(start)
        log("%s Range: %s -> %s" % (self.requestline, rng_header or "-", lie or "honest"))
        if rng is None and rng_header:
            self.headers_out(416, [("Content-Range", "bytes */%d" % size),
                                   ("Content-Length", "0")])
            return
        if lie is None or lie == "etag-change":
            tag = modified = None
            if lie == "etag-change":
                tag = '"changed-%s"' % etag.strip('"')
                modified = email.utils.formatdate(time.time(), usegmt=True)
            if rng is None:
                self.headers_out(200, self.identity(tag, modified) +
                                 [("Content-Length", str(size))])
                self.body(head, data)
                return
            a, b = rng
            self.headers_out(206, self.identity(tag, modified) +
                             [("Content-Range", "bytes %d-%d/%d" % (a, b, size)),
                              ("Content-Length", str(b - a + 1))])
            self.body(head, data[a:b + 1])
            return
        getattr(self, "lie_" + lie.replace("-", "_"))(head, rng or (0, size - 1), size)

    def partial(self, head, a, b, size, payload, total=None, extra=()):
        self.headers_out(206, self.identity() + list(extra) +
                         [("Content-Range", "bytes %d-%d/%d" % (a, b, size if total is None
                                                                else total)),
                          ("Content-Length", str(len(payload)))])
        self.body(head, payload)

    def lie_shifted_range(self, head, rng, size):
        a, b = rng
        n = b - a + 1
        a2 = a + args.shift if a + args.shift + n <= size else max(0, a - args.shift)
        b2 = min(a2 + n - 1, size - 1)
        self.partial(head, a2, b2, size, data[a2:b2 + 1])

    def lie_wrong_end(self, head, rng, size):
        a, b = rng
        b2 = b + args.shift if b + args.shift < size else max(a, b - args.shift)
        self.partial(head, a, b2, size, data[a:b2 + 1])

    def lie_wrong_total(self, head, rng, size):
        a, b = rng
        self.partial(head, a, b, size, data[a:b + 1], total=size + args.shift)

    def lie_no_content_range(self, head, rng, size):
        a, b = rng
        n = b - a + 1
        a2 = a + args.shift if a + args.shift + n <= size else max(0, a - args.shift)
        payload = data[a2:a2 + n]
        self.headers_out(206, self.identity() + [("Content-Length", str(len(payload)))])
        self.body(head, payload)

    def lie_short_close(self, head, rng, size):
        a, b = rng
        n = b - a + 1
        self.headers_out(206, self.identity() +
                         [("Content-Range", "bytes %d-%d/%d" % (a, b, size)),
                          ("Content-Length", str(n))])
        if not head:
            self.wfile.write(data[a:a + max(1, n // 2)])
            self.wfile.flush()
        self.close_now()

    def lie_short_length(self, head, rng, size):
        a, b = rng
        b2 = a + max(1, (b - a + 1) // 2) - 1
        self.partial(head, a, b2, size, data[a:b2 + 1])

    def lie_long_body(self, head, rng, size):
        a, b = rng
        payload = data[a:b + 1 + args.shift]
        payload += b"\xaa" * (b - a + 1 + args.shift - len(payload))
        self.partial(head, a, b, size, payload)

    def lie_gzip(self, head, rng, size):
        a, b = rng
        self.partial(head, a, b, size, gzip.compress(data[a:b + 1]),
                     extra=[("Content-Encoding", "gzip")])

    def lie_redirect_ftp(self, head, rng, size):
        self.headers_out(302, [("Location", "ftp://127.0.0.1:%d/file" % ftp_port),
                               ("Content-Length", "0")])

    def lie_redirect_loop(self, head, rng, size):
        self.headers_out(302, [("Location", "http://127.0.0.1:%d%s" %
                                (self.server.server_address[1], self.path)),
                               ("Content-Length", "0")])

    def lie_status_416(self, head, rng, size):
        self.headers_out(416, [("Content-Range", "bytes */%d" % size), ("Content-Length", "0")])

    def lie_not_http(self, head, rng, size):
        self.wfile.write(b"SSH-2.0-OpenSSH_9.2 \x00\x01\x02\xff this is not HTTP\r\n")
        self.wfile.flush()
        self.close_now()

    def lie_silent(self, head, rng, size):
        honest_now.wait()  # until SIGUSR1; SIGTERM ends the process
        self.close_now()

    def lie_drip(self, head, rng, size):
        a, b = rng
        self.headers_out(206, self.identity() +
                         [("Content-Range", "bytes %d-%d/%d" % (a, b, size)),
                          ("Content-Length", str(b - a + 1))])
        if head:
            return
        for i in range(a, b + 1):
            self.wfile.write(data[i:i + 1])  # a broken pipe ends the thread
            self.wfile.flush()
            time.sleep(0.25)

    def close_now(self):
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        log("connection from %s ended: %s" % (client_address, sys.exc_info()[1]))


class FtpLogger(socketserver.StreamRequestHandler):
    """Logs whatever connects and what it says; lets nobody log in or fetch anything."""

    def handle(self):
        self.note("connection from %s:%d" % self.client_address)
        try:
            self.wfile.write(b"220 lying_server FTP\r\n")
            for _ in range(32):
                line = self.rfile.readline(1024)
                if not line:
                    break
                self.note("command " + line.decode("latin-1").rstrip())
                verb = line.split(b" ")[0].strip().upper()
                if verb == b"USER":
                    self.wfile.write(b"331 password please\r\n")
                elif verb == b"QUIT":
                    self.wfile.write(b"221 bye\r\n")
                    break
                else:
                    self.wfile.write(b"530 not logged in\r\n")
        except OSError:
            pass

    def note(self, msg):
        log("ftp: " + msg)
        if args.log:
            with open(args.log, "a") as f:
                f.write(msg + "\n")


class FtpServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    global args, data, etag, last_modified, ftp_port, lies_left
    p = argparse.ArgumentParser()
    p.add_argument("file")
    p.add_argument("--lie", choices=LIES)
    p.add_argument("--after", type=int, default=0)
    p.add_argument("--count", type=int, default=-1)
    p.add_argument("--shift", type=int, default=4096)
    p.add_argument("--log", default="")
    p.add_argument("--port", type=int, default=0)
    args = p.parse_args()
    lies_left = args.count if args.count >= 0 else -1
    with open(args.file, "rb") as f:
        data = f.read()
    st = os.stat(args.file)
    etag = '"%x-%x"' % (st.st_mtime_ns, st.st_size)
    last_modified = email.utils.formatdate(st.st_mtime, usegmt=True)
    signal.signal(signal.SIGUSR1, lambda *a: honest_now.set())
    ftp = FtpServer(("127.0.0.1", 0), FtpLogger)
    ftp_port = ftp.server_address[1]
    threading.Thread(target=ftp.serve_forever, daemon=True).start()
    server = Server(("127.0.0.1", args.port), Handler)
    print(server.server_address[1], flush=True)
    log("serving %s (%d bytes, ETag %s) on port %d, ftp listener on port %d, lie %s after %d"
        % (args.file, len(data), etag, server.server_address[1], ftp_port, args.lie or "none",
           args.after))
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
