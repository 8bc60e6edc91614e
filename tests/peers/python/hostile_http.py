"""A hostile Streamable HTTP "server" for the bridge's bad-input tests.
Standard library only. Every POST gets the same misbehaviour, chosen by
the path:

* `/garbage` — an event stream of events that are not JSON, then the end;
* `/endless` — an event stream whose one event never ends;
* `/huge` — a chunked JSON body of about 1 GB;
* `/elsewhere` — a redirect to the same port on another loopback host;
* `/broken` — HTTP 500 with a line of text.

    python3 hostile_http.py   # prints "listening on http://127.0.0.1:PORT"
"""

import http.server
import sys

CHUNK = b"x" * 65536


class Hostile(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_DELETE(self):
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        self.send_response(405)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path == "/garbage":
            self.start("text/event-stream")
            self.chunk(b"data: this is not json\n\n: a comment\nevent: odd\ndata: {\"half\": \n\n")
            self.end()
        elif self.path == "/endless":
            self.start("text/event-stream")
            self.chunk(b"data: {\"jsonrpc\": \"2.0\", \"method\": \"x\", \"params\": \"")
            try:
                while True:
                    self.chunk(CHUNK)
            except (BrokenPipeError, ConnectionResetError):
                return
        elif self.path == "/huge":
            self.start("application/json")
            try:
                self.chunk(b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": \"")
                for _ in range(16384):
                    self.chunk(CHUNK)
                self.chunk(b"\"}")
                self.end()
            except (BrokenPipeError, ConnectionResetError):
                return
        elif self.path == "/elsewhere":
            port = self.server.server_address[1]
            self.send_response(307)
            self.send_header("Location", f"http://127.0.0.2:{port}/garbage")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            body = b"the database is on fire\n"
            self.send_response(500)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    def start(self, content_type):
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def end(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
