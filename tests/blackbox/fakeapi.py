#!/usr/bin/python3
"""A fake Kubernetes API server for the live-source tests: TLS on loopback,
Python's standard library only.

What it serves (JSON only, the way the webhook asks):
  GET /version
  GET collection            LIST with limit/continue and a resourceVersion;
                            PartialObjectMetadataList when the Accept header
                            asks for it (as=PartialObjectMetadataList)
  GET collection?watch=1    WATCH from resourceVersion: chunked JSON lines,
                            BOOKMARK events when allowWatchBookmarks=true,
                            ends after timeoutSeconds
  GET collection/NAME       one object (404 Status when absent)
for the resources in RESOURCES, cluster-wide (/apis/G/V/PLURAL) or in a
namespace (/apis/G/V/namespaces/NS/PLURAL[/NAME]).

On demand, through the methods of FakeAPI or POST /_control with
{"op": METHOD, ...keyword arguments} (for tests in other languages):
  apply(resource, object), delete(resource, name, namespace=None)
  gone(mode="event"|"status")  compacts history: open watches get an ERROR
                               410 event, re-watches from an older version
                               get 410 (as an event or an HTTP status)
  drop()                       cuts every open watch without a final chunk
  stall()                      open watches go silent (no events, no
                               bookmarks) but stay connected
  set_token(token)             only this bearer token is accepted from now
                               on: 401 until the client presents it
  hold(resource), release(resource)  single-object GETs of resource wait
                               (unanswered) until release(); held(resource)
                               says how many are waiting now
  set_version(major, minor)
  hide(resource), unhide(resource)  the resource answers 404, as when its CRD
                               is not installed
  fail_apply(resource, name, code=422, message=..., times=None)
                               server-side applies of that object answer
                               code with a Status carrying message, `times`
                               times or until heal()
  fail_create(resource, name, code=403, message=...)  dry-run creates of
                               that object are refused until heal()
  linger(resource, name, gets)  after its next DELETE the object is still
                               found by the next `gets` GETs, as while the
                               garbage collector holds an Orphan delete
  replace_before_delete(resource, name, namespace=None)  the next DELETE of
                               that object finds it deleted and created again
                               by someone else (a new uid) just before: a
                               uid precondition then fails with 409
  extra_items(resource, items)  LISTs of resource also answer these items
                               (another kind, no uid, another namespace: what
                               a client must not believe)
  fault(resource, mode, **kw)  what a real API server will not do on demand,
                               until heal_faults(); watches of resource:
                               "end" (200, ended at once, no event), "gone"
                               (every watch 410 Gone), "garbage" (200, one
                               line that is not JSON), "drip" (200, one byte
                               of a line that never ends every kw["every"]
                               seconds, 0.5 by default); LISTs of resource:
                               "endless" (every page has a continue token:
                               the same items again, page after page, each
                               page's metadata padded by kw["pad"] bytes),
                               "huge" (each item padded by kw["pad"] bytes in
                               an annotation); faults(resource, mode) says
                               how many requests each fault answered

Writes, for otel-reconcile run:
  GET /apis                    APIGroupList of the groups in RESOURCES, every
                               version of each
  GET collection?labelSelector=k=v,...  equality selectors
  PATCH collection/NAME        server-side apply (application/apply-patch+yaml,
                               fieldManager required): creates, or merges the
                               applied object into the stored one (RFC 7386),
                               resource quantities in canonical form;
                               the resourceVersion moves on every apply; a
                               change of an IMMUTABLE field answers 422 with
                               the API server's message
  PATCH collection/NAME/status merge patch of the status subresource
  PATCH collection/NAME        strategic merge or merge patch (maps merged as
                               RFC 7386; what `outdated --restart` and
                               `kubectl rollout restart` send)
  DELETE collection/NAME       200 with the object, 404 when absent; a
                               DeleteOptions body's preconditions.uid that
                               is not the object's answers 409 with the API
                               server's message (its generic store's)
  POST collection?dryRun=All   a dry-run create: 409 when the object exists,
                               unless fail_create refuses it first

Access reviews, for the collector admission's RBAC checks:
  POST /apis/authorization.k8s.io/v1/subjectaccessreviews
                               201 with status.allowed: whether allow() lets
                               spec.user (or one of spec.groups) do the verb
                               on the resource or non-resource URL; every
                               review's spec is kept in self.reviews
  allow(subject, verb, group="", resource=None, path=None)  ("*" verb or
                               resource: any), fail_reviews(code) (answer code
                               until heal_reviews()), slow_reviews(seconds),
                               hold_reviews(), release_reviews(): reviews wait
                               (unanswered) until release; held_reviews() says
                               how many wait now, wait_reviews_held(n, timeout)
                               waits (on the condition, no polling) until n do

Authentication: a bearer token, or a client certificate signed by
client_ca. Every request (method, path, query, accept, status) is kept in
self.requests and, when a log path is given (log_path or $OTEL_FAKEAPI_LOG),
written as one JSON line each: tests/deploy compares them with the RBAC the
manifests grant.

Standalone: tests/blackbox/fakeapi.py --cert C --key K --port P [--token T] [--log F]
"""
import json
import os
import re
import socket
import ssl
import sys
import threading
import time
import urllib.parse
import uuid
from fractions import Fraction
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# plural -> (group/version prefix, kind, namespaced)
RESOURCES = {
    "namespaces": ("api/v1", "Namespace", False),
    "pods": ("api/v1", "Pod", True),
    "secrets": ("api/v1", "Secret", True),
    "configmaps": ("api/v1", "ConfigMap", True),
    "replicasets": ("apis/apps/v1", "ReplicaSet", True),
    "deployments": ("apis/apps/v1", "Deployment", True),
    "statefulsets": ("apis/apps/v1", "StatefulSet", True),
    "daemonsets": ("apis/apps/v1", "DaemonSet", True),
    "jobs": ("apis/batch/v1", "Job", True),
    "cronjobs": ("apis/batch/v1", "CronJob", True),
    "instrumentations": ("apis/opentelemetry.io/v1alpha1", "Instrumentation", True),
    "opentelemetrycollectors": ("apis/opentelemetry.io/v1beta1", "OpenTelemetryCollector", True),
    # What otel-reconcile run applies.
    "services": ("api/v1", "Service", True),
    "serviceaccounts": ("api/v1", "ServiceAccount", True),
    "poddisruptionbudgets": ("apis/policy/v1", "PodDisruptionBudget", True),
    "horizontalpodautoscalers": ("apis/autoscaling/v2", "HorizontalPodAutoscaler", True),
    "ingresses": ("apis/networking.k8s.io/v1", "Ingress", True),
    "networkpolicies": ("apis/networking.k8s.io/v1", "NetworkPolicy", True),
    "clusterroles": ("apis/rbac.authorization.k8s.io/v1", "ClusterRole", False),
    "clusterrolebindings": ("apis/rbac.authorization.k8s.io/v1", "ClusterRoleBinding", False),
    "servicemonitors": ("apis/monitoring.coreos.com/v1", "ServiceMonitor", True),
    "podmonitors": ("apis/monitoring.coreos.com/v1", "PodMonitor", True),
    "routes": ("apis/route.openshift.io/v1", "Route", True),
    "httproutes": ("apis/gateway.networking.k8s.io/v1", "HTTPRoute", True),
    "targetallocators": ("apis/opentelemetry.io/v1alpha1", "TargetAllocator", True),
    "issuers": ("apis/cert-manager.io/v1", "Issuer", True),
    "certificates": ("apis/cert-manager.io/v1", "Certificate", True),
    "endpointslices": ("apis/discovery.k8s.io/v1", "EndpointSlice", True),
}
# What the API server refuses to change in place (apply answers 422).
IMMUTABLE = {
    "deployments": (["selector"], "field is immutable"),
    "daemonsets": (["selector"], "field is immutable"),
    "statefulsets": (["selector", "serviceName", "volumeClaimTemplates"],
                     "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', "
                     "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' "
                     "are forbidden"),
}
PATH_RE = re.compile(r"^/(api/v1|apis/[^/]+/[^/]+)(?:/namespaces/([^/]+))?/([^/]+)(?:/([^/]+))?$")
# PATCH and DELETE: one object, optionally its status subresource.
OBJECT_RE = re.compile(r"^/(api/v1|apis/[^/]+/[^/]+)(?:/namespaces/([^/]+))?/([^/]+)/([^/]+)(/status)?$")


def merge(dst, src):
    """JSON merge (RFC 7386) of src into dst, in place: maps merge, null
    deletes, anything else replaces. Good enough for server-side apply by
    one field manager and for status merge patches."""
    for k, v in src.items():
        if v is None:
            dst.pop(k, None)
        elif isinstance(v, dict) and isinstance(dst.get(k), dict):
            merge(dst[k], v)
        else:
            dst[k] = json.loads(json.dumps(v))
    return dst


def fields_v1(v):
    """The shape of a managedFields fieldsV1 set for an applied value:
    maps by field, list items by position (the API server keys them by
    merge key; the size is what matters here)."""
    if isinstance(v, dict):
        return {"f:" + k: fields_v1(x) for k, x in v.items()}
    if isinstance(v, list):
        return {'i:%d' % i: fields_v1(x) for i, x in enumerate(v)}
    return {}


BINARY = [("Ei", 2 ** 60), ("Pi", 2 ** 50), ("Ti", 2 ** 40), ("Gi", 2 ** 30), ("Mi", 2 ** 20), ("Ki", 2 ** 10)]
DECIMAL = [("E", 10 ** 18), ("P", 10 ** 15), ("T", 10 ** 12), ("G", 10 ** 9), ("M", 10 ** 6), ("k", 10 ** 3),
           ("", 1), ("m", Fraction(1, 10 ** 3)), ("u", Fraction(1, 10 ** 6)), ("n", Fraction(1, 10 ** 9))]


def canonical_quantity(v):
    """The API server's canonical form of a resource quantity ("1024Mi" ->
    "1Gi", "0.5" -> "500m", 1073741824 -> "1073741824"): binary input keeps
    a binary suffix, anything else a decimal one, the largest that leaves an
    integer. Values it does not parse are returned as they are."""
    text = str(v)
    m = re.fullmatch(r"([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?", text)
    if not m or isinstance(v, bool):
        return v
    suffix = m.group(2) or ""
    table = BINARY if suffix.endswith("i") else DECIMAL
    value = Fraction(m.group(1)) * dict(BINARY + DECIMAL)[suffix]
    if value == 0:
        return "0"
    for name, mult in table:
        if (value / mult).denominator == 1:
            return "%d%s" % (value / mult, name)
    return "%dn" % (value / Fraction(1, 10 ** 9))


def canonical_resources(v, inside=False):
    """Every value below a "requests" or "limits" map in canonical form."""
    if isinstance(v, dict):
        return {k: canonical_resources(x, inside or k in ("requests", "limits")) for k, x in v.items()}
    if isinstance(v, list):
        return [canonical_resources(x, inside) for x in v]
    return canonical_quantity(v) if inside and v is not None else v


def selected(obj, selector):
    """Equality-based label selectors only (k=v,k2=v2), what the clients ask."""
    labels = obj.get("metadata", {}).get("labels") or {}
    for term in filter(None, selector.split(",")):
        k, _, v = term.partition("=")
        if labels.get(k) != v:
            return False
    return True


def status(code, reason, message):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}


class FakeAPI:
    def __init__(self, certfile, keyfile, token="token-1", client_ca=None, log_path=None, bookmark_interval=0.5,
                 port=0):
        self.token = token
        self.rv = 100
        self.floor = 0
        self.objects = {r: {} for r in RESOURCES}
        self.events = {r: [] for r in RESOURCES}
        self.cond = threading.Condition()
        self.drop_gen = self.stall_gen = self.gone_gen = 0
        self.gone_mode = "event"
        self.holding = {}  # resource -> GETs of it waiting for release(), while held
        self.hidden = set()
        self.failing = {}  # (resource, name) -> HTTP status of its applies
        self.lingering = {}  # (resource, name) -> (GETs left, the deleted object)
        self.failing_create = {}  # (resource, name) -> (HTTP status, message) of dry-run creates
        self.replacing = set()  # (resource, namespace, name) replaced by someone else before the next DELETE
        self.extras = {}  # resource -> items every LIST of it answers too
        self.fault_modes = {}  # resource -> (mode, kwargs) of fault()
        self.fault_counts = {}  # (resource, mode) -> requests answered by the fault
        self.version = ("1", "30")
        self.grants = []  # (subject, verb, group, resource, path) the access reviews allow
        self.reviews = []
        self.review_status = 0
        self.review_delay = 0.0
        self.review_hold = False
        self.reviews_waiting = 0
        self.bookmark_interval = bookmark_interval
        self.requests = []
        self.log_path = log_path or os.environ.get("OTEL_FAKEAPI_LOG")
        self.log_lock = threading.Lock()
        self.pages = {}
        self.stopping = False
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(certfile, keyfile)
        if client_ca:
            ctx.verify_mode = ssl.CERT_OPTIONAL
            ctx.load_verify_locations(client_ca)
        api = self

        class Handler(_Handler):
            fake = api

        self.httpd = _Server(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True, do_handshake_on_connect=False)
        self.port = self.httpd.server_address[1]
        self.thread = None

    # -- lifecycle
    def start(self):
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        self.thread.start()
        return self.port

    def stop(self):
        with self.cond:
            self.stopping = True
            self.cond.notify_all()
        self.httpd.shutdown()
        self.httpd.server_close()

    # -- state
    def _next_rv(self):
        self.rv += 1
        return self.rv

    def apply(self, resource, obj, record=True):
        """Creates or replaces obj; returns the stored copy."""
        _, kind, namespaced = RESOURCES[resource]
        obj = json.loads(json.dumps(obj))
        meta = obj.setdefault("metadata", {})
        if namespaced:
            meta.setdefault("namespace", "default")
        else:
            meta.pop("namespace", None)
        key = (meta.get("namespace"), meta["name"])
        with self.cond:
            old = self.objects[resource].get(key)
            meta["uid"] = old["metadata"]["uid"] if old else meta.get("uid") or str(uuid.uuid4())
            meta["resourceVersion"] = str(self._next_rv())
            meta.setdefault("creationTimestamp", "2026-11-29T00:00:00Z")
            obj.setdefault("kind", kind)
            obj.setdefault("apiVersion", RESOURCES[resource][0].replace("apis/", "").replace("api/", ""))
            self.objects[resource][key] = obj
            if record:
                self.events[resource].append((self.rv, "MODIFIED" if old else "ADDED", obj))
            self.cond.notify_all()
        return obj

    def delete(self, resource, name, namespace=None):
        if RESOURCES[resource][2]:
            namespace = namespace or "default"
        with self.cond:
            obj = self.objects[resource].pop((namespace, name), None)
            if obj is None:
                return False
            obj = json.loads(json.dumps(obj))
            obj["metadata"]["resourceVersion"] = str(self._next_rv())
            self.events[resource].append((self.rv, "DELETED", obj))
            self.cond.notify_all()
        return True

    def gone(self, mode="event"):
        with self.cond:
            self.floor = self._next_rv()
            self.gone_mode = mode
            self.gone_gen += 1
            self.cond.notify_all()

    def fault(self, resource, mode, **kw):
        with self.cond:
            self.fault_modes[resource] = (mode, kw)
            self.drop_gen += 1  # open watches end: the next one meets the fault
            self.cond.notify_all()

    def heal_faults(self):
        with self.cond:
            self.fault_modes.clear()
            self.cond.notify_all()

    def faults(self, resource, mode):
        with self.cond:
            return self.fault_counts.get((resource, mode), 0)

    def _fault(self, resource, kinds):
        """The fault of resource when its mode is one of kinds (counted), or (None, {})."""
        with self.cond:
            mode, kw = self.fault_modes.get(resource, (None, {}))
            if mode not in kinds:
                return None, {}
            self.fault_counts[(resource, mode)] = self.fault_counts.get((resource, mode), 0) + 1
            return mode, kw

    def drop(self):
        with self.cond:
            self.drop_gen += 1
            self.cond.notify_all()

    def stall(self):
        with self.cond:
            self.stall_gen += 1
            self.cond.notify_all()

    def set_token(self, token):
        with self.cond:
            self.token = token
            self.drop_gen += 1  # open watches were authorised with the old one
            self.cond.notify_all()

    def hold(self, resource):
        with self.cond:
            self.holding.setdefault(resource, 0)

    def release(self, resource):
        with self.cond:
            self.holding.pop(resource, None)
            self.cond.notify_all()

    def held(self, resource):
        with self.cond:
            return self.holding.get(resource, 0)

    def hide(self, resource):
        self.hidden.add(resource)

    def unhide(self, resource):
        self.hidden.discard(resource)

    def fail_apply(self, resource, name, code=422, message="injected failure", times=None):
        """times: only that many applies fail (None: until heal())."""
        with self.cond:
            self.failing[(resource, name)] = (int(code), message, times)

    def linger(self, resource, name, gets):
        with self.cond:
            self.lingering[(resource, name)] = (gets, None)

    def fail_create(self, resource, name, code=403, message="denied by policy"):
        """Dry-run creates of that object answer code with message (an
        admission policy that would refuse it) until heal()."""
        with self.cond:
            self.failing_create[(resource, name)] = (int(code), message)

    def replace_before_delete(self, resource, name, namespace=None):
        if RESOURCES[resource][2]:
            namespace = namespace or "default"
        with self.cond:
            self.replacing.add((resource, namespace, name))

    def extra_items(self, resource, items):
        with self.cond:
            self.extras[resource] = json.loads(json.dumps(items))

    def heal(self):
        with self.cond:
            self.failing.clear()
            self.failing_create.clear()

    def get(self, resource, name, namespace=None):
        if RESOURCES[resource][2]:
            namespace = namespace or "default"
        with self.cond:
            obj = self.objects[resource].get((namespace, name))
            return json.loads(json.dumps(obj)) if obj is not None else None

    def allow(self, subject, verb, group="", resource=None, path=None):
        with self.cond:
            self.grants.append((subject, verb, group, resource, path))

    def fail_reviews(self, code=503):
        self.review_status = int(code)

    def heal_reviews(self):
        self.review_status = 0

    def slow_reviews(self, seconds):
        self.review_delay = float(seconds)

    def hold_reviews(self):
        with self.cond:
            self.review_hold = True

    def release_reviews(self):
        with self.cond:
            self.review_hold = False
            self.cond.notify_all()

    def held_reviews(self):
        with self.cond:
            return self.reviews_waiting

    def wait_reviews_held(self, n, timeout):
        """True once n reviews are held, False at the timeout."""
        with self.cond:
            return self.cond.wait_for(lambda: self.reviews_waiting >= n, timeout)

    def review(self, spec):
        """True when a grant lets spec's user or one of its groups do what it asks."""
        who = [spec.get("user")] + list(spec.get("groups") or [])
        ra, na = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
        with self.cond:
            self.reviews.append(spec)
            for subject, verb, group, resource, path in self.grants:
                if subject not in who:
                    continue
                if ra is not None and path is None and verb in ("*", ra.get("verb")) and group == ra.get("group", "") \
                        and resource in ("*", ra["resource"] + ("/" + ra["subresource"] if ra.get("subresource") else "")):
                    return True
                if na is not None and path is not None and verb in ("*", na.get("verb")) and path == na.get("path"):
                    return True
        return False

    def set_version(self, major, minor):
        self.version = (str(major), str(minor))

    def count(self, method="GET", path_prefix="", watch=None):
        n = 0
        for r in list(self.requests):
            if r["method"] != method or not r["path"].startswith(path_prefix):
                continue
            if watch is not None and ("watch=1" in r["query"]) != watch:
                continue
            n += 1
        return n

    def log(self, entry):
        with self.log_lock:
            self.requests.append(entry)
            if self.log_path:
                with open(self.log_path, "a") as f:
                    f.write(json.dumps(entry) + "\n")


def partial(obj):
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj["metadata"]}


class _Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # Refused handshakes (the wrong-CA test) and clients that hang up
        # are part of the tests, not errors of the fake.
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake = None

    def setup(self):
        try:
            # Headers and body are separate writes: without this, Nagle and the
            # client's delayed ACK add 40 ms to every answer.
            self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.request.do_handshake()
        except (ssl.SSLError, OSError):
            self.request.close()
            raise
        super().setup()

    def handle(self):
        try:
            super().handle()
        except (ssl.SSLError, OSError):
            pass

    def log_message(self, fmt, *args):
        pass

    def _send(self, code, obj, record=True):
        body = json.dumps(obj).encode()
        if record:
            self._record(code)  # before answering: a test may look as soon as it has the answer
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _record(self, code):
        u = urllib.parse.urlsplit(self.path)
        self.fake.log({"method": self.command, "path": u.path, "query": u.query,
                       "accept": self.headers.get("Accept", ""), "status": code, "time": time.time()})

    def _authorised(self):
        if self.request.getpeercert():
            return True
        auth = self.headers.get("Authorization", "")
        return auth == "Bearer %s" % self.fake.token

    def do_POST(self):
        u = urllib.parse.urlsplit(self.path)
        if u.path == "/apis/authorization.k8s.io/v1/subjectaccessreviews":
            return self._access_review()
        if u.path != "/_control":
            return self._create()
        n = int(self.headers.get("Content-Length", "0"))
        args = json.loads(self.rfile.read(n) or b"{}")
        op = args.pop("op", "")
        if op not in ("apply", "delete", "gone", "drop", "stall", "set_token", "hold", "release", "set_version", "hide",
                      "unhide", "fail_apply", "fail_create", "heal", "hold_reviews", "release_reviews",
                      "replace_before_delete", "extra_items"):
            return self._send(400, {"error": "unknown op %r" % op}, record=False)
        result = getattr(self.fake, op)(**args)
        self._send(200, {"ok": True, "result": result if isinstance(result, (bool, dict)) else None}, record=False)

    def _access_review(self):
        fake = self.fake
        if not self._authorised():
            return self._send(401, status(401, "Unauthorized", "Unauthorized"))
        try:
            obj = self._body()
        except Exception as e:  # noqa: BLE001
            return self._send(400, status(400, "BadRequest", "body: %s" % e))
        if obj.get("kind") != "SubjectAccessReview" or obj.get("apiVersion") != "authorization.k8s.io/v1" or \
                not isinstance(obj.get("spec"), dict):
            return self._send(400, status(400, "BadRequest", "not a SubjectAccessReview"))
        with fake.cond:
            if fake.review_hold:
                fake.reviews_waiting += 1
                fake.cond.notify_all()
                while fake.review_hold and not fake.stopping:
                    fake.cond.wait()
                fake.reviews_waiting -= 1
        if fake.review_delay:
            time.sleep(fake.review_delay)  # an API server that answers late
        if fake.review_status:
            with fake.cond:
                fake.reviews.append(obj["spec"])
            return self._send(fake.review_status, status(fake.review_status, "ServiceUnavailable", "injected failure"))
        obj["status"] = {"allowed": fake.review(obj["spec"])}
        self._send(201, obj)

    def _create(self):
        """POST collection?dryRun=All: what otel-reconcile asks before it
        deletes an object to create it again. Validation first (fail_create),
        then the storage's existence check (409), as a real server does.
        Real creates are not needed by any client and answer 405."""
        fake = self.fake
        u = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(u.query))
        if not self._authorised():
            return self._send(401, status(401, "Unauthorized", "Unauthorized"))
        m = PATH_RE.match(u.path)
        if (not m or m.group(4) or m.group(3) not in RESOURCES or RESOURCES[m.group(3)][0] != m.group(1) or
                m.group(3) in fake.hidden):
            return self._send(404, status(404, "NotFound", "the server could not find the requested resource"))
        if q.get("dryRun") != "All":
            return self._send(405, status(405, "MethodNotAllowed", "the fake only answers dry-run creates"))
        _, ns, resource, _ = m.groups()
        try:
            obj = self._body()
        except Exception as e:  # noqa: BLE001
            return self._send(400, status(400, "BadRequest", "body: %s" % e))
        name = (obj.get("metadata") or {}).get("name", "")
        with fake.cond:
            failing = fake.failing_create.get((resource, name))
        if failing:
            code, message = failing
            return self._send(code, status(code, "Forbidden" if code == 403 else "Invalid", message))
        if fake.get(resource, name, ns) is not None:
            return self._send(409, status(409, "AlreadyExists", '%s "%s" already exists' % (resource, name)))
        self._send(201, obj)

    def do_GET(self):
        fake = self.fake
        u = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(u.query, keep_blank_values=True))
        if not self._authorised():
            return self._send(401, status(401, "Unauthorized", "Unauthorized"))
        if u.path == "/version":
            major, minor = fake.version
            return self._send(200, {"major": major, "minor": minor, "gitVersion": "v%s.%s.0" % (major, minor)})
        if u.path == "/apis":
            groups = {}
            for r, (gv, _, _) in RESOURCES.items():
                if gv.startswith("apis/") and r not in fake.hidden:
                    g, v = gv[5:].split("/")
                    if v not in groups.setdefault(g, []):
                        groups[g].append(v)
            return self._send(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
                {"name": g, "versions": [{"groupVersion": "%s/%s" % (g, v), "version": v} for v in vs],
                 "preferredVersion": {"groupVersion": "%s/%s" % (g, vs[0]), "version": vs[0]}}
                for g, vs in sorted(groups.items())]})
        m = PATH_RE.match(u.path)
        if (not m or m.group(3) not in RESOURCES or RESOURCES[m.group(3)][0] != m.group(1) or
                m.group(3) in fake.hidden):
            return self._send(404, status(404, "NotFound", "the server could not find the requested resource"))
        _, ns, resource, name = m.groups()
        accept = self.headers.get("Accept", "")
        if name:
            with fake.cond:
                if resource in fake.holding:  # an API server that does not answer (yet)
                    fake.holding[resource] += 1
                    fake.cond.wait_for(lambda: resource not in fake.holding or fake.stopping, 60)
                    if resource in fake.holding:
                        fake.holding[resource] -= 1
            key = (ns if RESOURCES[resource][2] else None, name)
            obj = fake.objects[resource].get(key)
            with fake.cond:
                left = fake.lingering.get((resource, name))
                if obj is None and left and left[0] > 0 and left[1] is not None:
                    fake.lingering[(resource, name)] = (left[0] - 1, left[1])
                    obj = left[1]
            if obj is None:
                return self._send(404, status(404, "NotFound", '%s "%s" not found' % (resource, name)))
            return self._send(200, partial(obj) if "as=PartialObjectMetadata" in accept else obj)
        if q.get("watch") in ("1", "true"):
            return self._watch(resource, ns, q, "as=PartialObjectMetadata" in accept)
        return self._list(resource, ns, q, "as=PartialObjectMetadataList" in accept)

    def _list(self, resource, ns, q, meta_only):
        fake = self.fake
        limit = int(q.get("limit") or 0)
        token = q.get("continue")
        fault, kw = fake._fault(resource, ("endless", "huge"))
        with fake.cond:
            if token:
                entry = fake.pages.get(token)
                if entry is None:
                    return self._send(410, status(410, "Expired", "the continue token expired"))
                rv, items = entry
            else:
                rv = fake.rv
                items = [o for (n, _), o in sorted(fake.objects[resource].items(), key=lambda kv: (kv[0][0] or "",
                                                                                                    kv[0][1]))
                         if (ns is None or n == ns) and selected(o, q.get("labelSelector", ""))]
        with fake.cond:
            if not token:
                items = items + json.loads(json.dumps(fake.extras.get(resource, [])))
        page, rest = (items[:limit], items[limit:]) if limit else (items, [])
        meta = {"resourceVersion": str(rv)}
        if fault == "endless":
            # An API server (or something in front of it) that never stops
            # answering continue: the same items again, page after page.
            nt = uuid.uuid4().hex
            fake.pages[nt] = (rv, items)
            meta["continue"] = nt
            if kw.get("pad"):
                meta["padding"] = "x" * kw["pad"]
            rest = []
        if rest:
            nt = uuid.uuid4().hex
            fake.pages[nt] = (rv, rest)
            meta["continue"] = nt
        if fault == "huge":
            page = [json.loads(json.dumps(o)) for o in page]
            for o in page:
                o["metadata"].setdefault("annotations", {})["pad"] = "x" * kw.get("pad", 1 << 20)
        if meta_only:
            body = {"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1", "metadata": meta,
                    "items": [partial(o) for o in page]}
        else:
            body = {"kind": RESOURCES[resource][1] + "List", "apiVersion": "v1", "metadata": meta, "items": page}
        self._send(200, body)

    def _object(self):
        """(resource, namespace key, name, subresource) of a PATCH or DELETE
        path, or None after answering 401/404."""
        if not self._authorised():
            self._send(401, status(401, "Unauthorized", "Unauthorized"))
            return None
        m = OBJECT_RE.match(urllib.parse.urlsplit(self.path).path)
        if (not m or m.group(3) not in RESOURCES or RESOURCES[m.group(3)][0] != m.group(1) or
                m.group(3) in self.fake.hidden or (m.group(2) is None) == RESOURCES[m.group(3)][2]):
            self._send(404, status(404, "NotFound", "the server could not find the requested resource"))
            return None
        gv, ns, resource, name, sub = m.groups()
        return resource, ns, name, sub

    def _body(self):
        n = int(self.headers.get("Content-Length", "0"))
        text = self.rfile.read(n).decode()
        try:
            return json.loads(text)
        except ValueError:
            import yaml  # apply patches may be YAML; ours are JSON
            return yaml.safe_load(text)

    def do_PATCH(self):
        fake = self.fake
        target = self._object()
        if not target:
            return
        resource, ns, name, sub = target
        q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
        ctype = self.headers.get("Content-Type", "")
        try:
            patch = self._body()
        except Exception as e:  # noqa: BLE001 - any parse error is the client's
            return self._send(400, status(400, "BadRequest", "body: %s" % e))
        if not isinstance(patch, dict):
            return self._send(400, status(400, "BadRequest", "the patch is not an object"))
        if sub:
            if ctype != "application/merge-patch+json":
                return self._send(415, status(415, "UnsupportedMediaType", "status: merge patches only"))
            with fake.cond:
                obj = fake.objects[resource].get((ns, name))
                if obj is None:
                    return self._send(404, status(404, "NotFound", '%s "%s" not found' % (resource, name)))
                obj = json.loads(json.dumps(obj))
            st = obj.setdefault("status", {})
            merge(st, patch.get("status") or {})
            return self._send(200, fake.apply(resource, obj))
        if ctype in ("application/strategic-merge-patch+json", "application/merge-patch+json"):
            with fake.cond:
                old = fake.objects[resource].get((ns, name))
                if old is None:
                    return self._send(404, status(404, "NotFound", '%s "%s" not found' % (resource, name)))
                obj = merge(json.loads(json.dumps(old)), patch)
                if "spec" in patch:
                    obj["metadata"]["generation"] = old["metadata"].get("generation", 1) + 1
                return self._send(200, fake.apply(resource, obj))
        if ctype != "application/apply-patch+yaml":
            return self._send(415, status(415, "UnsupportedMediaType", "server-side apply only"))
        if not q.get("fieldManager"):
            return self._send(422, status(422, "Invalid", "fieldManager is required for apply patch"))
        with fake.cond:
            failing = fake.failing.get((resource, name))
            if failing and failing[2] is not None:
                fake.failing[(resource, name)] = (failing[0], failing[1], failing[2] - 1)
                if failing[2] <= 0:
                    failing = None
        if failing:
            code, message, _ = failing
            return self._send(code, status(code, "Invalid", '%s "%s" is invalid: %s' % (resource, name, message)))
        meta = patch.get("metadata") or {}
        if meta.get("name") != name or (ns and meta.get("namespace", ns) != ns):
            return self._send(400, status(400, "BadRequest", "the name of the object does not match the path"))
        patch = canonical_resources(patch)
        with fake.cond:
            old = fake.objects[resource].get((ns, name))
            if old and resource in IMMUTABLE:
                fields, why = IMMUTABLE[resource]
                for f in fields:
                    if f in (patch.get("spec") or {}) and patch["spec"][f] != (old.get("spec") or {}).get(f):
                        return self._send(422, status(422, "Invalid", '%s "%s" is invalid: spec.%s: %s' % (
                            RESOURCES[resource][1], name, f, why)))
            obj = merge(json.loads(json.dumps(old)) if old else {}, patch)
            if ns:
                obj["metadata"]["namespace"] = ns
            # What a real API server records for the field manager, so that
            # clients see objects of realistic size.
            obj["metadata"]["managedFields"] = [{
                "manager": q["fieldManager"], "operation": "Apply", "apiVersion": obj.get("apiVersion", ""),
                "time": "2026-11-29T00:00:00Z", "fieldsType": "FieldsV1",
                "fieldsV1": fields_v1({k: v for k, v in patch.items() if k not in ("apiVersion", "kind")})}]
            stored = fake.apply(resource, obj)
        self._send(200 if old else 201, stored)

    def do_DELETE(self):
        target = self._object()
        if not target:
            return
        resource, ns, name, sub = target
        try:
            opts = self._body() if int(self.headers.get("Content-Length", "0")) else {}
        except Exception as e:  # noqa: BLE001
            return self._send(400, status(400, "BadRequest", "body: %s" % e))
        with self.fake.cond:
            replace = (resource, ns, name) in self.fake.replacing
            self.fake.replacing.discard((resource, ns, name))
        old = self.fake.get(resource, name, ns)
        if replace and old is not None:
            # Someone deleted it and created another of the same name.
            self.fake.delete(resource, name, ns)
            again = json.loads(json.dumps(old))
            again["metadata"]["uid"] = str(uuid.uuid4())
            again["metadata"]["ownerReferences"] = []
            old = self.fake.apply(resource, again)
        want = ((opts or {}).get("preconditions") or {}).get("uid")
        if old is not None and want and want != old["metadata"]["uid"]:
            # k8s.io/apiserver's generic store: the storage's InvalidObj
            # error, answered as a Conflict.
            gv = RESOURCES[resource][0]
            group = gv.split("/")[1] if gv.startswith("apis/") else ""
            key = "/registry/%s/%s%s" % (resource, ns + "/" if ns else "", name)
            return self._send(409, status(409, "Conflict", 'Operation cannot be fulfilled on %s%s "%s": StorageError: '
                                          'invalid object, Code: 4, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: '
                                          'Precondition failed: UID in precondition: %s, UID in object meta: %s' % (
                                              resource, "." + group if group else "", name, key, want,
                                              old["metadata"]["uid"])))
        if sub or old is None or not self.fake.delete(resource, name, ns):
            return self._send(404, status(404, "NotFound", '%s "%s" not found' % (resource, name)))
        with self.fake.cond:
            left = self.fake.lingering.get((resource, name))
            if left and left[1] is None:
                self.fake.lingering[(resource, name)] = (left[0], old)
        self._send(200, old)

    def _chunk(self, obj):
        data = (json.dumps(obj) + "\n").encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _watch(self, resource, ns, q, meta_only):
        fake = self.fake
        rv_param = q.get("resourceVersion") or ""
        with fake.cond:
            pos = int(rv_param) if rv_param not in ("", "0") else fake.rv
            too_old = pos < fake.floor
            mode = fake.gone_mode
            gens = (fake.drop_gen, fake.stall_gen, fake.gone_gen)
        fault, kw = fake._fault(resource, ("end", "gone", "garbage", "drip"))
        if (too_old and mode == "status") or fault == "gone":
            return self._send(410, status(410, "Expired", "too old resource version: %s" % rv_param))
        self._record(200)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if too_old:
            self._chunk({"type": "ERROR", "object": status(410, "Expired", "too old resource version")})
            self.wfile.write(b"0\r\n\r\n")
            return
        try:
            if fault == "end":
                self.wfile.write(b"0\r\n\r\n")
                return
            if fault == "garbage":
                data = b"<html>this is not a watch event</html>\n"
                self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(data), data))
                return
            if fault == "drip":
                # A line that never ends, a byte at a time, until healed.
                self.wfile.write(b"1\r\n{\r\n")
                self.wfile.flush()
                while True:
                    with fake.cond:
                        fake.cond.wait(kw.get("every", 0.5))
                        if fake.stopping or fake.fault_modes.get(resource, (None,))[0] != "drip":
                            break
                    self.wfile.write(b"1\r\n \r\n")
                    self.wfile.flush()
                self.request.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                return
        except (OSError, ssl.SSLError):
            self.close_connection = True
            return
        deadline = time.monotonic() + float(q.get("timeoutSeconds") or 1800)
        bookmarks = q.get("allowWatchBookmarks") == "true"
        last_sent = time.monotonic()
        stalled = False
        kind = RESOURCES[resource][1]
        try:
            while True:
                with fake.cond:
                    if not stalled:
                        evs = [e for e in fake.events[resource] if e[0] > pos and
                               (ns is None or e[2]["metadata"].get("namespace") == ns)]
                    else:
                        evs = []
                    if not evs:
                        fake.cond.wait(0.1)
                    drop = fake.drop_gen != gens[0] or fake.stopping
                    stall = fake.stall_gen != gens[1]
                    gone = fake.gone_gen != gens[2]
                if drop:
                    # No final chunk: the client sees the transfer cut short.
                    self.request.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                if stall:
                    stalled = True
                    continue
                if gone:
                    self._chunk({"type": "ERROR", "object": status(410, "Expired", "too old resource version")})
                    self.wfile.write(b"0\r\n\r\n")
                    return
                for rv, typ, obj in evs:
                    self._chunk({"type": typ, "object": partial(obj) if meta_only else obj})
                    pos = rv
                    last_sent = time.monotonic()
                now = time.monotonic()
                if bookmarks and now - last_sent >= fake.bookmark_interval:
                    # The last version sent: events that arrived meanwhile
                    # are still to come on this stream.
                    self._chunk({"type": "BOOKMARK", "object": {"kind": kind, "apiVersion": "v1",
                                                                "metadata": {"resourceVersion": str(pos)}}})
                    last_sent = now
                if now >= deadline:
                    self.wfile.write(b"0\r\n\r\n")
                    return
        except (OSError, ssl.SSLError):
            self.close_connection = True


def main():
    import argparse
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--token", default="token-1")
    p.add_argument("--client-ca")
    p.add_argument("--log")
    a = p.parse_args()
    fake = FakeAPI(a.cert, a.key, a.token, a.client_ca, a.log, port=a.port)
    print("https://127.0.0.1:%d" % fake.start(), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        fake.stop()


if __name__ == "__main__":
    sys.exit(main())
