"""What crosses between the server and its fork server: JSON messages in frames, and file descriptors.

A frame is a 4-byte big-endian length, then that many bytes of JSON (``multiprocessing.connection``'s
framing). Only JSON crosses, never pickle: the fork server is trusted, but it forks hostile code,
and nothing it sends may run anything in the server. A message may carry file descriptors
(SCM_RIGHTS: a pool's own channel, a training worker's socket), sent with the frame's first
bytes; ``recv`` reads a frame exactly, so they arrive with the message that carries them.
"""

from __future__ import annotations

import array
import json
import os
import select
import socket
import struct
import threading
from collections.abc import Sequence

HEADER = struct.Struct("!I")
MAX_FDS = 8  # descriptors one message may carry: a request carries one


class Channel:
    """One end of a unix stream socket, spoken in frames. ``send`` may be called from any thread;
    one thread at a time receives."""

    def __init__(self, sock: socket.socket, max_message: int) -> None:
        self.sock = sock
        self.max_message = max_message
        self._sending = threading.Lock()

    def fileno(self) -> int:
        return self.sock.fileno()

    def send(self, message: dict, fds: Sequence[int] = ()) -> None:
        """One message (and ``fds``, duplicated into the receiver). OSError once the other end is gone."""
        body = json.dumps(message, separators=(",", ":")).encode()
        frame = HEADER.pack(len(body)) + body
        with self._sending:
            sent = socket.send_fds(self.sock, [frame], list(fds)) if fds else 0
            self.sock.sendall(frame[sent:])

    def recv(self) -> tuple[dict, list[int]]:
        """The next message and the descriptors it carried. Raises EOFError at the other end's close,
        OSError on a frame that is not a message within ``max_message`` bytes."""
        fds: list[int] = []
        header = self._exactly(HEADER.size, fds)
        (size,) = HEADER.unpack(header)
        if size > self.max_message:
            _close(fds)
            raise OSError(f"a message of {size:,} bytes, more than {self.max_message:,}")
        try:
            message = json.loads(self._exactly(size, fds))
        except ValueError:
            _close(fds)
            raise OSError("a message that is not JSON") from None
        if not isinstance(message, dict):
            _close(fds)
            raise OSError("a message that is not a JSON object")
        return message, fds

    def poll(self, timeout: float = 0.0) -> bool:
        """Whether a message (or the end) can be read now, waiting up to ``timeout`` seconds."""
        return bool(select.select([self.sock], [], [], timeout)[0])

    def close(self) -> None:
        self.sock.close()

    def _exactly(self, size: int, fds: list[int]) -> bytes:
        data = bytearray()
        room = socket.CMSG_SPACE(MAX_FDS * array.array("i").itemsize)
        while len(data) < size:
            chunk, ancillary, _, _ = self.sock.recvmsg(size - len(data), room)
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    got = array.array("i")
                    got.frombytes(payload[:len(payload) - len(payload) % got.itemsize])
                    fds.extend(got)
            if not chunk:
                _close(fds)
                raise EOFError
            data += chunk
        return bytes(data)


def _close(fds: list[int]) -> None:
    for fd in fds:
        os.close(fd)
