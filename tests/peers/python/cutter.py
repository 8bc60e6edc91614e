"""A TCP relay that drops its connections on demand, for the bridge's
dropped-stream test (standard library only).

    python3 cutter.py TARGET_PORT    # prints "listening on PORT"

Each line read on stdin (`cut`) closes every connection open at that
moment, both ways, as a network that drops would; new connections are
relayed as before.
"""

import socket
import sys
import threading

connections = set()
lock = threading.Lock()


def pump(source, sink):
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    for s in (source, sink):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def accept(listener, target):
    while True:
        client, _ = listener.accept()
        server = socket.create_connection(("127.0.0.1", target))
        with lock:
            connections.update((client, server))
        threading.Thread(target=pump, args=(client, server), daemon=True).start()
        threading.Thread(target=pump, args=(server, client), daemon=True).start()


def main():
    target = int(sys.argv[1])
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    threading.Thread(target=accept, args=(listener, target), daemon=True).start()
    print(f"listening on {listener.getsockname()[1]}", flush=True)
    for _ in sys.stdin:
        with lock:
            cut = list(connections)
            connections.clear()
        for s in cut:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        print(f"cut {len(cut) // 2}", flush=True)


if __name__ == "__main__":
    main()
