"""tests/blackbox/h2frames.py - just enough HTTP/2 to talk to `serve --http2`
and to try it where it must not answer: frames, HPACK literals (no
compression: a literal without indexing per header), the :status of an
answer, and one connection pumped from one thread (Python's ssl module
does not allow reading and writing one socket from two threads)."""
import select
import ssl
import struct
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE = 0, 1, 3, 4, 6, 7, 8
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
SETTINGS_INITIAL_WINDOW_SIZE = 4
REFUSED_STREAM, ENHANCE_YOUR_CALM = 0x7, 0xb


def frame(ftype, flags, sid, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", sid) + payload


def _hpack_int(v, prefix_bits):
    top = (1 << prefix_bits) - 1
    if v < top:
        return bytes([v])
    out = [top]
    v -= top
    while v >= 128:
        out.append(v % 128 + 128)
        v //= 128
    out.append(v)
    return bytes(out)


def hpack(headers):
    """A header block of literals without indexing, new names, no Huffman."""
    out = b""
    for k, v in headers:
        k, v = k.encode(), v.encode()
        out += b"\x00" + _hpack_int(len(k), 7) + k + _hpack_int(len(v), 7) + v
    return out


def request_headers(method, path, extra=()):
    return hpack([(":method", method), (":scheme", "https"), (":path", path), (":authority", "localhost")] +
                 ([("content-type", "application/json")] if method == "POST" else []) + list(extra))


_STATIC_STATUS = {8: 200, 9: 204, 10: 206, 11: 304, 12: 400, 13: 404, 14: 500}


def status_of(block):
    """The :status of a response header block, which h2o writes first: an
    indexed static entry, or a literal with the static name and a plain
    value. None when it is neither."""
    if not block:
        return None
    b0 = block[0]
    if b0 & 0x80:
        return _STATIC_STATUS.get(b0 & 0x7f)
    literal = (b0 & 0xc0 == 0x40 and b0 & 0x3f == 8) or (b0 & 0xf0 in (0x00, 0x10) and b0 & 0x0f == 8)
    if literal and len(block) > 1 and not block[1] & 0x80:
        n = block[1] & 0x7f
        try:
            return int(block[2:2 + n])
        except ValueError:
            return None
    return None


class H2:
    """One HTTP/2 connection over an established TLS socket. send() queues
    bytes; pump() moves them and parses what comes back into frames (acking
    the server's SETTINGS); wait_for() pumps until a condition holds."""

    def __init__(self, sock):
        self.s = sock
        sock.setblocking(False)
        self.out = b""
        self.inb = b""
        self.frames = []
        self.eof = False

    def send(self, data):
        self.out += data

    def _step(self, timeout):
        if self.eof:
            return
        if self.s.pending():
            readable, writable = True, False
        else:
            r, w, _ = select.select([self.s], [self.s] if self.out else [], [], max(0.0, timeout))
            readable, writable = bool(r), bool(w)
        try:
            if readable:
                d = self.s.recv(1 << 20)
                if not d:
                    self.eof = True
                    return
                self.inb += d
                self._parse()
            if writable and self.out:
                n = self.s.send(self.out[:1 << 18])
                self.out = self.out[n:]
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
            pass
        except (OSError, ssl.SSLError):
            # A send fails once the peer has closed (reset) the connection,
            # which it may do right after its last frames: a server closing
            # a connection whose input it has not read sends a RST after
            # them. What it sent before is in the socket still; read it all,
            # or a GOAWAY that arrived between select() and send() is lost.
            self._read_to_end(5.0)
            self.eof = True

    def _read_to_end(self, timeout):
        """Reads and parses what is left until end of file or an error (the
        socket is closed by the peer: both come at once; the timeout is only
        a safety net)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                d = self.s.recv(1 << 20)
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                select.select([self.s], [], [], max(0.0, deadline - time.monotonic()))
                continue
            except (OSError, ssl.SSLError):
                return
            if not d:
                return
            self.inb += d
            self._parse()

    def _parse(self):
        while len(self.inb) >= 9:
            n = int.from_bytes(self.inb[:3], "big")
            if len(self.inb) < 9 + n:
                return
            t, f = self.inb[3], self.inb[4]
            sid = int.from_bytes(self.inb[5:9], "big") & 0x7fffffff
            self.frames.append((t, f, sid, self.inb[9:9 + n]))
            self.inb = self.inb[9 + n:]
            if t == SETTINGS and not f & ACK:
                self.out += frame(SETTINGS, ACK, 0)

    def wait_for(self, cond, timeout):
        """Pumps until cond(self) or end of file or the deadline; cond's value."""
        deadline = time.monotonic() + timeout
        while not cond(self) and not self.eof and time.monotonic() < deadline:
            self._step(min(0.05, max(0.0, deadline - time.monotonic())))
        return cond(self)

    def drain(self, timeout):
        """Pumps until everything queued is sent (or the connection ends)."""
        return self.wait_for(lambda h: not h.out, timeout)

    def goaway(self):
        """(error code, debug text) of the first GOAWAY, or None."""
        for t, _, _, p in self.frames:
            if t == GOAWAY and len(p) >= 8:
                return int.from_bytes(p[4:8], "big"), p[8:]
        return None

    def response(self, sid):
        """(status, body) once stream sid's answer is complete, else None."""
        status, body, done = None, b"", False
        for t, f, s, p in self.frames:
            if s != sid:
                continue
            if t == HEADERS:
                status = status_of(p)
            elif t == DATA:
                body += p
            if t in (HEADERS, DATA) and f & END_STREAM:
                done = True
        return (status, body) if done else None

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass
