#!/usr/bin/python3
"""A fault-injecting HTTP proxy for the remote-model tests (standard library only).

Forwards GET and HEAD requests, with their Range and Authorization headers, to an upstream
server, and breaks some of them on purpose:
  --fail-every N      answer every Nth request with 503
  --busy-every N      answer every Nth request with 429
  --drop-every N      close every Nth connection without answering (a reset)
  --delay-every N     wait --delay seconds before answering every Nth request
  --fail-from BYTES   answer 503 to every request whose range starts at or after BYTES
Prints the port it listens on (127.0.0.1), then serves until killed.
"""
import argparse
import http.client
import http.server
import socket
import sys
import threading
import time

args = None
counter = 0
counter_lock = threading.Lock()


def every(n, k):
    return n > 0 and k % n == 0


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_HEAD(self):
        self.forward(head=True)

    def do_GET(self):
        self.forward(head=False)

    def forward(self, head):
        global counter
        with counter_lock:
            counter += 1
            k = counter
        rng = self.headers.get("Range", "")
        start = int(rng[6:].split("-")[0]) if rng.startswith("bytes=") and rng[6:7].isdigit() else 0
        if every(args.drop_every, k):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            self.connection.close()
            self.close_connection = True
            return
        if every(args.delay_every, k):
            time.sleep(args.delay)
        if every(args.fail_every, k) or every(args.busy_every, k) or (
                args.fail_from >= 0 and start >= args.fail_from):
            status = 429 if every(args.busy_every, k) else 503
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        up = http.client.HTTPConnection("127.0.0.1", args.upstream_port, timeout=30)
        headers = {h: self.headers[h] for h in ("Range", "Authorization", "If-Range")
                   if self.headers.get(h)}
        up.request("HEAD" if head else "GET", self.path, headers=headers)
        resp = up.getresponse()
        body = resp.read()
        self.send_response(resp.status)
        for h, v in resp.getheaders():
            if h.lower() not in ("connection", "transfer-encoding", "keep-alive", "server", "date"):
                self.send_header(h, v)
        self.end_headers()
        if not head:
            self.wfile.write(body)
        up.close()


def main():
    global args
    p = argparse.ArgumentParser()
    p.add_argument("--upstream-port", type=int, required=True)
    p.add_argument("--fail-every", type=int, default=0)
    p.add_argument("--busy-every", type=int, default=0)
    p.add_argument("--drop-every", type=int, default=0)
    p.add_argument("--delay-every", type=int, default=0)
    p.add_argument("--delay", type=float, default=0.0)
    p.add_argument("--fail-from", type=int, default=-1)
    args = p.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
