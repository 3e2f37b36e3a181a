// tests/deploy/rbac.mjs - a small RBAC evaluator, written for the deploy tests.
//
// requestInfo() turns an API request (method, path with query) into the
// attributes the API server's RequestInfoResolver derives (verb, apiGroup,
// resource, subresource, namespace, name; or a non-resource URL), and
// authorize() evaluates them against rendered Roles, ClusterRoles,
// RoleBindings and ClusterRoleBindings as the RBAC authorizer does:
// ClusterRoleBindings grant their ClusterRole everywhere, RoleBindings grant a
// Role or ClusterRole in their own namespace only (never cluster-scoped
// resources or cluster-wide lists); verbs, apiGroups, resources
// ("resource/subresource"), resourceNames (never matching a request without a
// name) and "*" as the authorizer reads them. Non-resource URLs that the
// built-in system:discovery and system:public-info-viewer roles give every
// authenticated identity are allowed without a rule.

export const PUBLIC_URLS = ['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/readyz', '/version',
                            '/version/', '/openapi', '/openapi/*'];

export function requestInfo(method, rawPath) {
  const u = new URL(rawPath, 'https://apiserver.invalid');
  const path = u.pathname.replace(/\/+$/, '') || '/';
  const parts = path.split('/').filter(Boolean);
  const q = u.searchParams;
  let rest, group, version;
  if (parts[0] === 'api' && parts.length >= 2) { group = ''; version = parts[1]; rest = parts.slice(2); }
  else if (parts[0] === 'apis' && parts.length >= 3) { group = parts[1]; version = parts[2]; rest = parts.slice(3); }
  if (!rest || rest.length === 0) return { nonResource: true, url: path, verb: method.toLowerCase() };
  const info = { nonResource: false, group, version, namespace: '', name: '', subresource: '' };
  if (rest[0] === 'namespaces' && rest.length >= 3) { info.namespace = rest[1]; rest = rest.slice(2); }
  else if (rest[0] === 'namespaces' && rest.length === 2) { info.namespace = rest[1]; }
  info.resource = rest[0];
  if (rest.length >= 2) info.name = rest[1];
  if (rest.length >= 3) info.subresource = rest[2];
  const m = method.toUpperCase();
  const watch = ['1', 'true'].includes((q.get('watch') || '').toLowerCase());
  info.verb = { POST: 'create', PUT: 'update', PATCH: 'patch' }[m]
    || (m === 'GET' || m === 'HEAD' ? (info.name ? (watch ? 'watch' : 'get') : (watch ? 'watch' : 'list'))
    : m === 'DELETE' ? (info.name ? 'delete' : 'deletecollection') : m.toLowerCase());
  return info;
}

// Every authorizer check a request makes: itself, plus the contract's
// "authorize" extras (create on server-side apply, finalizers update for
// blockOwnerDeletion owner references).
export function checksOf(req) {
  const base = requestInfo(req.method, req.path);
  const out = [base];
  for (const a of req.authorize || []) {
    out.push({ nonResource: false, group: a.group || '', version: a.version || 'v1', namespace: a.namespace || '',
               name: a.name || '', resource: a.resource, subresource: a.subresource || '', verb: a.verb });
  }
  return out;
}

const has = (list, v) => (list || []).includes('*') || (list || []).includes(v);

function ruleMatches(rule, a) {
  if (a.nonResource) {
    return has(rule.verbs, a.verb) && (rule.nonResourceURLs || []).some(
      (u) => u === '*' || u === a.url || (u.endsWith('*') && a.url.startsWith(u.slice(0, -1))));
  }
  if (!rule.resources) return false;
  const res = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const resOk = rule.resources.some((r) => r === '*' || r === res
    || (a.subresource && r === `*/${a.subresource}`) || (a.subresource && r === `${a.resource}/*`));
  if (!has(rule.verbs, a.verb) || !has(rule.apiGroups, a.group) || !resOk) return false;
  if (rule.resourceNames && rule.resourceNames.length) return !!a.name && rule.resourceNames.includes(a.name);
  return true;
}

function subjectMatches(s, sa) {
  const [ns, name] = sa.split(':');
  if (s.kind === 'ServiceAccount') return s.name === name && (s.namespace || '') === ns;
  if (s.kind === 'Group') return ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'].includes(s.name);
  if (s.kind === 'User') return s.name === `system:serviceaccount:${ns}:${name}`;
  return false;
}

// The rules that apply to sa, each with where it applies ('' = everywhere) and
// the role it comes from.
export function grants(objs, sa) {
  const roles = new Map();
  for (const o of objs) {
    if (o.kind === 'ClusterRole') roles.set(`ClusterRole//${o.metadata.name}`, o);
    if (o.kind === 'Role') roles.set(`Role/${o.metadata.namespace}/${o.metadata.name}`, o);
  }
  const out = [];
  for (const b of objs) {
    if (b.kind !== 'ClusterRoleBinding' && b.kind !== 'RoleBinding') continue;
    if (!(b.subjects || []).some((s) => subjectMatches(s, sa))) continue;
    const ref = b.roleRef;
    const key = ref.kind === 'ClusterRole' ? `ClusterRole//${ref.name}` : `Role/${b.metadata.namespace}/${ref.name}`;
    const role = roles.get(key);
    if (!role) { out.push({ missing: key, binding: b }); continue; }
    const scope = b.kind === 'ClusterRoleBinding' ? '' : b.metadata.namespace;
    (role.rules || []).forEach((rule, i) => out.push({ rule, index: i, role, scope, binding: b }));
  }
  return out;
}

export function authorize(objs, sa, a, g = grants(objs, sa)) {
  if (a.nonResource && PUBLIC_URLS.some((u) => u === a.url || (u.endsWith('*') && a.url.startsWith(u.slice(0, -1))))) {
    return { allowed: true, by: [] };
  }
  const by = g.filter((x) => x.rule && (x.scope === '' || (!a.nonResource && a.namespace === x.scope))
    && ruleMatches(x.rule, a));
  return { allowed: by.length > 0, by };
}

// The individual permissions a rule grants: one per verb x group x resource
// (x resourceName), so "exercised" can be checked for each.
export function atoms(rule) {
  const out = [];
  for (const v of rule.verbs || []) for (const g of rule.apiGroups || ['']) for (const r of rule.resources || [])
    for (const n of (rule.resourceNames && rule.resourceNames.length ? rule.resourceNames : [''])) {
      out.push({ verb: v, group: g, resource: r, name: n });
    }
  for (const v of rule.verbs || []) for (const u of rule.nonResourceURLs || []) out.push({ verb: v, url: u });
  return out;
}

export function atomCovers(atom, a) {
  if (atom.url !== undefined) return a.nonResource && ruleMatches({ verbs: [atom.verb], nonResourceURLs: [atom.url] }, a);
  return !a.nonResource && ruleMatches({ verbs: [atom.verb], apiGroups: [atom.group], resources: [atom.resource],
                                         resourceNames: atom.name ? [atom.name] : [] }, a);
}

// The owner's kind of a contract line: "ownerKind" [group, resource, version],
// a collector by default.
function ownerOf(l) {
  const [group, resource, version] = l.ownerKind || ['opentelemetry.io', 'opentelemetrycollectors', 'v1beta1'];
  return { group, resource, version };
}

// Expands the contract's compact lines ("kinds" x "verbs") into requests.
export function expandContract(lines) {
  const out = [];
  for (const l of lines) {
    if (!l.sa) continue;
    if (!l.kinds) { out.push(l); continue; }
    for (const [group, resource, version] of l.kinds) {
      const prefix = group ? `/apis/${group}/${version}` : `/api/${version}`;
      const nsPart = l.namespace ? `/namespaces/${l.namespace}` : '';
      for (const verb of l.verbs) {
        const r = { sa: l.sa, why: l.why };
        if (verb === 'list') { r.method = 'GET'; r.path = `${prefix}/${resource}`; }
        else if (verb === 'list-in-namespace') { r.method = 'GET'; r.path = `${prefix}${nsPart}/${resource}`; }
        else if (verb === 'patch') {
          // Server-side apply: a PATCH, authorized as create too when the
          // object does not exist yet, and (blockOwnerDeletion owner
          // references) as update of the owner's finalizers.
          r.method = 'PATCH'; r.path = `${prefix}${nsPart}/${resource}/${l.name}?fieldManager=otel-reconcile&force=true`;
          r.authorize = [{ verb: 'create', group, version, resource, namespace: l.namespace || '' }];
          if (l.owner) {
            r.authorize.push({ verb: 'update', ...ownerOf(l), subresource: 'finalizers', namespace: l.namespace, name: l.owner });
          }
        }
        else if (verb === 'create') {
          r.method = 'POST'; r.path = `${prefix}${nsPart}/${resource}`;
          if (l.owner) {
            r.authorize = [{ verb: 'update', ...ownerOf(l), subresource: 'finalizers', namespace: l.namespace, name: l.owner }];
          }
        } else if (verb === 'update') { r.method = 'PUT'; r.path = `${prefix}${nsPart}/${resource}/${l.name}`; }
        else if (verb === 'delete') { r.method = 'DELETE'; r.path = `${prefix}${nsPart}/${resource}/${l.name}`; }
        else if (verb === 'get') { r.method = 'GET'; r.path = `${prefix}${nsPart}/${resource}/${l.name}`; }
        else throw new Error(`contract: unknown verb ${verb}`);
        out.push(r);
      }
    }
  }
  return out;
}

// The shape of a request, for matching recorded requests with the contract.
export function shape(a) {
  if (a.nonResource) return `${a.verb} ${a.url}`;
  return [a.verb, a.group, a.resource, a.subresource, a.namespace ? 'namespaced' : 'cluster', a.name ? 'named' : 'all'].join(' ');
}
