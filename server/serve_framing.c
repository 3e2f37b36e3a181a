/* server/serve_framing.c - HTTP/1 requests that say their length twice.
 *
 * A request with both Content-Length and Transfer-Encoding, or with two
 * Content-Lengths (or two Transfer-Encodings), can be read two ways; a
 * proxy in front that reads it the other way lets a second request ride in
 * its body ("request smuggling", RFC 9112 6.3). h2o 2.2.5 picks one
 * reading silently (Transfer-Encoding over Content-Length, the first of
 * several Content-Lengths) and then serves whatever follows as the next
 * request. Such requests get 400 and the connection is closed, so nothing
 * after them is read.
 *
 * h2o hands handlers neither header: lib/http1.c's init_headers() takes
 * them out of req->headers. But the request head is still there, as
 * received, at the start of the connection's socket input buffer while the
 * request is handled: h2o consumes it only once the response has been sent
 * (on_send_complete), parses it in place (only lower-casing the header
 * names), and decodes a chunked body after it. So the check reads the
 * socket (through the public get_socket callback, not the private
 * connection struct) and scans the head again. It relies on that h2o
 * 2.2.5 behaviour, so it first makes sure the buffer starts with this
 * request's method and path; when it does not (another h2o), it says so
 * once in the log and lets requests through unchecked, and the black-box
 * smuggling tests fail. HTTP/2 has no such ambiguity (frames carry the
 * length), so only HTTP/1 requests are scanned. */
#include "server/serve.h"

#include "server/log.h"

#include <stdatomic.h>
#include <string.h>
#include <strings.h>

static bool name_is(const char *p, size_t n, const char *name) {
    return n == strlen(name) && strncasecmp(p, name, n) == 0;
}

/* The head at buf (len bytes): 0 and the counts when it is this request's,
 * -1 when it is not what h2o parsed. Lines end with LF, or CRLF; the head
 * ends with an empty line; a line starting with a space or a tab continues
 * the previous header (picohttpparser's reading). */
static int scan(const char *buf, size_t len, const h2o_req_t *req, int *cl, int *te) {
    const char *p = buf, *end = buf + len;
    while (p < end && (*p == '\r' || *p == '\n')) p++; /* picohttpparser skips empty lines before a request */
    h2o_iovec_t m = req->input.method, path = req->input.path;
    if ((size_t)(end - p) < m.len + 1 + path.len || memcmp(p, m.base, m.len) || p[m.len] != ' ' ||
        memcmp(p + m.len + 1, path.base, path.len))
        return -1;
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) return -1;
    for (p = eol + 1; p < end; p = eol + 1) {
        if (!(eol = memchr(p, '\n', (size_t)(end - p)))) return -1; /* the head must be complete */
        size_t n = (size_t)(eol - p);
        if (n && p[n - 1] == '\r') n--;
        if (n == 0) return 0; /* the empty line */
        if (*p == ' ' || *p == '\t') continue;
        const char *colon = memchr(p, ':', n);
        if (!colon) continue;
        size_t nl = (size_t)(colon - p);
        if (name_is(p, nl, "content-length")) ++*cl;
        else if (name_is(p, nl, "transfer-encoding")) ++*te;
    }
    return -1;
}

const char *serve_framing_check(h2o_req_t *req) {
    if (req->version >= 0x200) return NULL;
    h2o_socket_t *sock = req->conn->callbacks->get_socket ? req->conn->callbacks->get_socket(req->conn) : NULL;
    int cl = 0, te = 0;
    if (!sock || !sock->input || scan(sock->input->bytes, sock->input->size, req, &cl, &te) != 0) {
        static atomic_bool said;
        if (!atomic_exchange(&said, true))
            log_kv(LOG_ERROR, "cannot check HTTP/1 request framing: the request head is not where h2o 2.2.5 leaves it; "
                              "requests with conflicting lengths are not refused",
                   NULL);
        return NULL;
    }
    if (cl && te) return "ambiguous request framing: both Content-Length and Transfer-Encoding";
    if (cl > 1) return "ambiguous request framing: more than one Content-Length";
    if (te > 1) return "ambiguous request framing: more than one Transfer-Encoding";
    return NULL;
}
