// tests/deploy/check.mjs - offline checks of the rendered deploy/ overlays.
//
//   node check.mjs ROOT RENDERED_DIR
//
// ROOT is the repository, RENDERED_DIR holds <overlay>.yaml as rendered by
// `kubectl kustomize` (tests/deploy/run.sh). Prints "FAIL ..." for every
// failed check and ends with "COUNTS <passed> <failed>".
//
//  1. every rendered object validates against the Kubernetes OpenAPI schemas
//     (kubernetes-models' bundled validators; cert-manager's for its kinds);
//  2. our CRDs are structural, and their openAPIV3Schema (through ajv) accepts
//     the Instrumentations and collectors of examples/ and
//     tests/deploy/crd-examples/valid, and rejects tests/deploy/crd-examples/invalid;
//  3. the webhook configuration's safety properties and the pod security
//     settings of every workload;
//  4. RBAC: every request of tests/deploy/expected-requests.jsonl (and of
//     the fake API server's logs: OTEL_FAKEAPI_LOG, OTEL_FAKEAPI_RECONCILE_LOG,
//     tests/deploy/fakeapi-sample.jsonl) is allowed, every rule is exercised,
//     and every recorded request is in the contract;
//  5. monitoring (deploy/monitoring, in the monitoring overlay): the
//     ServiceMonitor scrapes what the webhook serves (its Service and port,
//     HTTPS, /metrics, the serving CA and a name the certificate is for), and
//     the PrometheusRule is docs/metrics.md's alerts: the same names, expressions
//     and durations, every expression PromQL, every metric it names one the
//     webhook serves (docs/metrics.md's tables, which the server tests hold
//     to /metrics) or one of the few named from Prometheus and kube-state-metrics.
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import * as rbac from './rbac.mjs';
import { parser as promql } from '@prometheus-io/lezer-promql';
import { unknownFields } from './strict.mjs';
import { fileURLToPath } from 'node:url';
const NODE_MODULES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'node_modules');

const [ROOT, RENDERED] = process.argv.slice(2);
let passed = 0, failed = 0;
function check(ok, what, detail) {
  if (ok) passed++;
  else { failed++; console.log(`FAIL ${what}${detail ? `: ${detail}` : ''}`); }
  return ok;
}
const readYamlDocs = (file) => YAML.parseAllDocuments(fs.readFileSync(file, 'utf8'))
  .map((d) => { if (d.errors.length) throw new Error(`${file}: ${d.errors[0].message}`); return d.toJS(); })
  .filter((d) => d && typeof d === 'object');
const id = (o) => `${o.kind}/${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata?.name}`;

const OVERLAYS = fs.readdirSync(RENDERED).filter((f) => f.endsWith('.yaml')).map((f) => f.slice(0, -5)).sort();
const rendered = Object.fromEntries(OVERLAYS.map((o) => [o, readYamlDocs(path.join(RENDERED, `${o}.yaml`))]));
for (const must of ['cert-manager', 'self-managed', 'label-opt-in', 'restrict-secrets', 'monitoring']) {
  check(rendered[must], `overlay ${must} rendered`);
}

// ---------------------------------------------------------------- 1. schemas
async function modelFor(o) {
  const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
  const spec = group === 'cert-manager.io' ? `@kubernetes-models/cert-manager/${o.apiVersion}/${o.kind}`
    : group === 'monitoring.coreos.com' ? `@kubernetes-models/prometheus-operator/${o.apiVersion}/${o.kind}`
    : group ? `kubernetes-models/${group}/${version}/${o.kind}` : `kubernetes-models/${version}/${o.kind}`;
  try { const M = (await import(spec))[o.kind]; if (M) M.__spec = spec; return M; } catch { return null; }
}
async function validateK8s(o, where) {
  const M = await modelFor(o);
  if (!check(M, `${where}: ${id(o)}: a schema for ${o.apiVersion} ${o.kind}`)) return false;
  try { new M(o).validate(); check(true); }
  catch (e) { return check(false, `${where}: ${id(o)} does not validate`, e.message.split('\n').slice(0, 3).join('; ')); }
  const errs = unknownFields(o, path.join(NODE_MODULES, `${M.__spec}.d.ts`), NODE_MODULES);
  return check(errs.length === 0, `${where}: ${id(o)} has no unknown fields`, errs.slice(0, 5).join('; '));
}
for (const o of OVERLAYS) {
  for (const obj of rendered[o]) {
    await validateK8s(obj, o);
    const l = obj.metadata?.labels || {};
    check(l['app.kubernetes.io/name'] && l['app.kubernetes.io/component'], `${o}: ${id(obj)} is labelled app.kubernetes.io/name and component`);
  }
}
// Other manifests of examples/ (pods, workloads) validate too.
const exampleDocs = [];
for (const dir of ['examples', 'examples/resources']) {
  for (const f of fs.readdirSync(path.join(ROOT, dir)).filter((f) => /\.ya?ml$/.test(f)).sort()) {
    for (const d of readYamlDocs(path.join(ROOT, dir, f))) exampleDocs.push({ file: `${dir}/${f}`, d });
  }
}
for (const { file, d } of exampleDocs) {
  if (d.apiVersion?.startsWith('opentelemetry.io/')) continue;
  await validateK8s(d, file);
}
// A deliberately broken object is refused (the validators are not no-ops).
{
  const M = await modelFor({ apiVersion: 'apps/v1', kind: 'Deployment' });
  let refused = false;
  try { new M({ metadata: { name: 'x' }, spec: { replicas: 'two', selector: {}, template: {} } }).validate(); }
  catch { refused = true; }
  check(refused, 'schema validation refuses a Deployment with replicas: "two"');
  const typo = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x', labels: { a: 'b' } },
                 spec: { selector: {}, template: { spec: { containers: [{ name: 'c', image: 'i', readinesProbe: {} }] } } } };
  const errs = unknownFields(typo, path.join(NODE_MODULES, `${M.__spec}.d.ts`), NODE_MODULES);
  check(errs.length === 1 && errs[0].includes('containers[0].readinesProbe'), 'unknown fields are found (a misspelt readinesProbe)', errs.join('; '));
}

// ------------------------------------------------------------------- 2. CRDs
const base = rendered['cert-manager'] || [];
const crds = base.filter((o) => o.kind === 'CustomResourceDefinition');
check(crds.length === 3, 'three CRDs in deploy/base', crds.map(id).join(', '));

function structuralErrors(s, at, inAnyOf = false, errs = []) {
  if (!s || typeof s !== 'object') { errs.push(`${at}: not a schema`); return errs; }
  const special = s['x-kubernetes-int-or-string'] || s['x-kubernetes-preserve-unknown-fields'];
  if (!inAnyOf && !s.type && !special) errs.push(`${at}: no type`);
  if (inAnyOf && (s.additionalProperties || s.description || s.default !== undefined || s.nullable)) {
    errs.push(`${at}: anyOf/allOf/oneOf branches may only hold value validations`);
  }
  if (s.properties && s.additionalProperties) errs.push(`${at}: properties and additionalProperties together`);
  if (s.type === 'array' && !s.items) errs.push(`${at}: array without items`);
  if (s['x-kubernetes-int-or-string'] && s.type) errs.push(`${at}: int-or-string with a type`);
  for (const [k, v] of Object.entries(s.properties || {})) structuralErrors(v, `${at}.${k}`, false, errs);
  if (s.additionalProperties && typeof s.additionalProperties === 'object') structuralErrors(s.additionalProperties, `${at}.*`, false, errs);
  if (s.items) structuralErrors(s.items, `${at}[]`, false, errs);
  for (const k of ['anyOf', 'allOf', 'oneOf']) {
    for (const b of s[k] || []) {
      if (b.type && !s['x-kubernetes-int-or-string']) errs.push(`${at}.${k}: a type in a branch`);
      if (b.properties) for (const [p, v] of Object.entries(b.properties)) structuralErrors(v, `${at}.${k}.${p}`, true, errs);
    }
  }
  return errs;
}

// openAPIV3Schema -> JSON Schema for ajv. Objects that do not preserve unknown
// fields get additionalProperties: false: the API server would prune (drop)
// such fields silently, and an example that loses fields is a failure too.
function toJsonSchema(s) {
  if (Array.isArray(s)) return s.map(toJsonSchema);
  if (!s || typeof s !== 'object') return s;
  const out = {};
  for (const [k, v] of Object.entries(s)) {
    if (k.startsWith('x-kubernetes-') || k === 'nullable' || k === 'default' || k === 'description') continue;
    out[k] = ['properties', 'patternProperties'].includes(k)
      ? Object.fromEntries(Object.entries(v).map(([p, ps]) => [p, toJsonSchema(ps)]))
      : toJsonSchema(v);
  }
  if (s.nullable && out.type) out.type = [out.type, 'null'];
  if (s.type === 'object' && s.properties && !s['x-kubernetes-preserve-unknown-fields'] && !s.additionalProperties) {
    out.additionalProperties = false;
  }
  return out;
}
const ajv = new Ajv({ allErrors: true, strict: false });
addFormats(ajv);
ajv.addFormat('int32', { type: 'number', validate: (n) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
ajv.addFormat('int64', { type: 'number', validate: (n) => Number.isInteger(n) });
const crdValidators = new Map(); // "group/version Kind" -> ajv validator
for (const crd of crds) {
  const s = crd.spec;
  check(crd.metadata.name === `${s.names.plural}.${s.group}`, `${id(crd)}: name is plural.group`);
  check(s.versions.filter((v) => v.storage).length === 1, `${id(crd)}: one storage version`);
  for (const v of s.versions) {
    const schema = v.schema?.openAPIV3Schema;
    const errs = structuralErrors(schema, `${s.names.kind}.${v.name}`);
    check(errs.length === 0, `${id(crd)} ${v.name}: structural schema`, errs.slice(0, 5).join('; '));
    check(v.subresources?.status, `${id(crd)} ${v.name}: status subresource`);
    crdValidators.set(`${s.group}/${v.name} ${s.names.kind}`, ajv.compile(toJsonSchema(schema)));
  }
}
const inst = crds.find((c) => c.spec.names.kind === 'Instrumentation');
const coll = crds.find((c) => c.spec.names.kind === 'OpenTelemetryCollector');
check(inst?.spec.versions.some((v) => v.name === 'v1alpha1' && v.served), 'Instrumentation v1alpha1 served');
const cv = coll?.spec.versions.find((v) => v.name === 'v1beta1');
check(cv?.served && cv?.storage, 'OpenTelemetryCollector v1beta1 served and stored');
{
  // v1alpha1 as the operator serves it, converted by our POST /convert.
  const av = coll?.spec.versions.find((v) => v.name === 'v1alpha1');
  check(av?.served && !av.storage && av.deprecated === true
        && av.deprecationWarning === 'OpenTelemetryCollector v1alpha1 is deprecated. Migrate to v1beta1.',
        'OpenTelemetryCollector v1alpha1 served, not stored, deprecated with the operator\'s warning');
  check(av?.schema?.openAPIV3Schema?.properties?.spec?.properties?.config?.type === 'string'
        && av.schema.openAPIV3Schema.properties.spec.required?.includes('config'), 'collector v1alpha1: spec.config, a string, required');
  const conv = coll?.spec.conversion;
  check(conv?.strategy === 'Webhook' && conv.webhook?.clientConfig?.service?.path === '/convert' && !conv.webhook.clientConfig.url,
        'collector CRD: strategy Webhook, path /convert through a Service', JSON.stringify(conv));
  check(JSON.stringify(conv?.webhook?.conversionReviewVersions) === '["v1","v1beta1"]',
        'collector CRD: conversionReviewVersions [v1, v1beta1] (ConversionReview versions, both answered)');
}
{
  const sc = cv?.subresources?.scale || {};
  const at = (p) => p.split('.').filter(Boolean).reduce((s, k) => s?.properties?.[k], cv?.schema.openAPIV3Schema);
  check(sc.specReplicasPath === '.spec.replicas' && at('.spec.replicas')?.type === 'integer', 'collector scale: spec.replicas');
  check(at(sc.statusReplicasPath || '.x')?.type === 'integer', 'collector scale: statusReplicasPath is an integer field', sc.statusReplicasPath);
  check(at(sc.labelSelectorPath || '.x')?.type === 'string', 'collector scale: labelSelectorPath is a string field', sc.labelSelectorPath);
  const config = at('.spec.config');
  check(config?.['x-kubernetes-preserve-unknown-fields'] === true, 'collector spec.config keeps unknown fields');
}
function validateCR(o) {
  const v = crdValidators.get(`${o.apiVersion} ${o.kind}`);
  if (!v) return [`no CRD serves ${o.apiVersion} ${o.kind}`];
  return v(o) ? [] : v.errors.map((e) => `${e.instancePath || '/'} ${e.message}${e.params?.additionalProperty ? ` (${e.params.additionalProperty})` : ''}`);
}
const crExamples = exampleDocs.filter(({ d }) => d.apiVersion?.startsWith('opentelemetry.io/'));
check(crExamples.length >= 2, 'examples/ holds Instrumentations and collectors', String(crExamples.length));
const exDir = path.join(ROOT, 'tests/deploy/crd-examples');
for (const kind of ['valid', 'invalid']) {
  for (const f of fs.readdirSync(path.join(exDir, kind)).sort()) {
    for (const d of readYamlDocs(path.join(exDir, kind, f))) crExamples.push({ file: `crd-examples/${kind}/${f}`, d, invalid: kind === 'invalid' });
  }
}
for (const { file, d, invalid } of crExamples) {
  const errs = validateCR(d);
  if (invalid) check(errs.length > 0, `${file}: ${id(d)} is refused by the CRD schema`);
  else check(errs.length === 0, `${file}: ${id(d)} is accepted by the CRD schema`, errs.slice(0, 4).join('; '));
}

// ----------------------------------------------------------- 3. safety checks
function selectorMatches(sel, labels) {
  for (const [k, v] of Object.entries(sel?.matchLabels || {})) if (labels[k] !== v) return false;
  for (const e of sel?.matchExpressions || []) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    if (e.operator === 'In' && !(has && e.values.includes(labels[e.key]))) return false;
    if (e.operator === 'NotIn' && has && e.values.includes(labels[e.key])) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}
const nsLabels = (name, extra = {}) => ({ 'kubernetes.io/metadata.name': name, ...extra });

for (const o of OVERLAYS) {
  const objs = rendered[o];
  const find = (kind, name) => objs.find((x) => x.kind === kind && x.metadata.name === name);
  const mwc = find('MutatingWebhookConfiguration', 'otel-webhook');
  const vwc = find('ValidatingWebhookConfiguration', 'otel-webhook');
  const podHooks = (mwc?.webhooks || []).filter((x) => x.rules?.some((r) => r.resources?.includes('pods')));
  if (!check(mwc && podHooks.length === 1 && mwc.webhooks[0] === podHooks[0],
             `${o}: MutatingWebhookConfiguration otel-webhook, its first webhook the one pod webhook`)) continue;
  const w = podHooks[0];
  const canon = (v) => (Array.isArray(v) ? v.map(canon) : v && typeof v === 'object'
    ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])])) : v);
  const eq = (a, b) => JSON.stringify(canon(a)) === JSON.stringify(canon(b));
  check(eq(w.admissionReviewVersions, ['v1']), `${o}: admissionReviewVersions [v1]`);
  check(w.sideEffects === 'None', `${o}: sideEffects None`);
  check(w.failurePolicy === 'Ignore', `${o}: failurePolicy Ignore`);
  check(w.timeoutSeconds === 5, `${o}: timeoutSeconds 5`);
  check(w.reinvocationPolicy === 'IfNeeded', `${o}: reinvocationPolicy IfNeeded`);
  check(eq(w.rules, [{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations: ['CREATE'], scope: 'Namespaced' }]),
        `${o}: rules are pods CREATE only`, JSON.stringify(w.rules));
  check(!w.objectSelector || Object.keys(w.objectSelector).length === 0, `${o}: no objectSelector`);
  const svcRef = w.clientConfig?.service || {};
  check(svcRef.path === '/mutate-v1-pod' && !w.clientConfig.url, `${o}: path /mutate-v1-pod through the Service`);
  const svc = find('Service', svcRef.name);
  check(svc && svc.metadata.namespace === svcRef.namespace, `${o}: the webhook's Service exists`, `${svcRef.namespace}/${svcRef.name}`);
  const port = svc?.spec.ports.find((p) => p.port === (svcRef.port ?? 443));
  check(port && (svcRef.port ?? 443) === 443, `${o}: Service port 443`);
  const dep = find('Deployment', 'otel-webhook');
  const ctr = dep?.spec.template.spec.containers[0];
  const cport = ctr?.ports?.find((p) => p.name === port?.targetPort || p.containerPort === port?.targetPort);
  check(cport?.containerPort === 10250, `${o}: Service 443 -> container port 10250`);
  check(selectorMatches({ matchLabels: svc?.spec.selector }, dep?.spec.template.metadata.labels || {}), `${o}: Service selects the webhook pods`);
  check(ctr?.args?.includes('--listen=0.0.0.0:10250'), `${o}: serve listens on 0.0.0.0:10250`);

  // Who the API server calls: by namespace labels.
  const optIn = o === 'label-opt-in';
  const cases = [
    ['kube-system', nsLabels('kube-system'), false], ['kube-public', nsLabels('kube-public'), false],
    ['kube-node-lease', nsLabels('kube-node-lease'), false], ['otel-webhook-system', nsLabels('otel-webhook-system'), false],
    ['skip-labelled', nsLabels('team-a', { 'otel-webhook/skip': 'true' }), false],
    ['kube-system labelled enabled', nsLabels('kube-system', { 'otel-webhook/enabled': 'true' }), false],
    ['enabled and skip', nsLabels('team-a', { 'otel-webhook/enabled': 'true', 'otel-webhook/skip': 'true' }), false],
    ['enabled-labelled', nsLabels('team-a', { 'otel-webhook/enabled': 'true' }), true],
    ['unlabelled app namespace', nsLabels('team-a'), !optIn],
    ['skip: "false"', nsLabels('team-a', { 'otel-webhook/skip': 'false' }), !optIn],
  ];
  for (const [what, labels, called] of cases) {
    check(selectorMatches(w.namespaceSelector, labels) === called, `${o}: namespace ${what} is ${called ? '' : 'not '}sent to the webhook`);
  }
  const ownNs = find('Namespace', 'otel-webhook-system');
  check(ownNs && !selectorMatches(w.namespaceSelector, { 'kubernetes.io/metadata.name': 'otel-webhook-system', ...ownNs.metadata.labels }),
        `${o}: our own namespace is never sent`);

  // The custom resources' webhooks: the operator's registrations (names,
  // paths, rules), failing closed for writes but only ever for
  // opentelemetry.io resources, Ignore for deletes.
  const CR_HOOKS = [
    ['minstrumentation.kb.io', 'm', '/mutate-opentelemetry-io-v1alpha1-instrumentation', 'v1alpha1', 'instrumentations', ['CREATE', 'UPDATE'], 'Fail'],
    ['mopampbridge.kb.io', 'm', '/mutate-opentelemetry-io-v1alpha1-opampbridge', 'v1alpha1', 'opampbridges', ['CREATE', 'UPDATE'], 'Fail'],
    ['mopentelemetrycollectorbeta.kb.io', 'm', '/mutate-opentelemetry-io-v1beta1-opentelemetrycollector', 'v1beta1', 'opentelemetrycollectors', ['CREATE', 'UPDATE'], 'Fail'],
    ['vinstrumentationcreateupdate.kb.io', 'v', '/validate-opentelemetry-io-v1alpha1-instrumentation', 'v1alpha1', 'instrumentations', ['CREATE', 'UPDATE'], 'Fail'],
    ['vinstrumentationdelete.kb.io', 'v', '/validate-opentelemetry-io-v1alpha1-instrumentation', 'v1alpha1', 'instrumentations', ['DELETE'], 'Ignore'],
    ['vopampbridgecreateupdate.kb.io', 'v', '/validate-opentelemetry-io-v1alpha1-opampbridge', 'v1alpha1', 'opampbridges', ['CREATE', 'UPDATE'], 'Fail'],
    ['vopampbridgedelete.kb.io', 'v', '/validate-opentelemetry-io-v1alpha1-opampbridge', 'v1alpha1', 'opampbridges', ['DELETE'], 'Ignore'],
    ['vopentelemetrycollectorcreateupdatebeta.kb.io', 'v', '/validate-opentelemetry-io-v1beta1-opentelemetrycollector', 'v1beta1', 'opentelemetrycollectors', ['CREATE', 'UPDATE'], 'Fail'],
    ['vopentelemetrycollectordeletebeta.kb.io', 'v', '/validate-opentelemetry-io-v1beta1-opentelemetrycollector', 'v1beta1', 'opentelemetrycollectors', ['DELETE'], 'Ignore'],
  ];
  check(vwc, `${o}: ValidatingWebhookConfiguration otel-webhook`);
  const crHooks = [...(mwc.webhooks || []).slice(1), ...(vwc?.webhooks || [])];
  check(eq(crHooks.map((x) => x.name), CR_HOOKS.map((x) => x[0])), `${o}: the custom resources' webhooks, as the operator names them`,
        JSON.stringify(crHooks.map((x) => x.name)));
  for (const [name, which, hookPath, version, resource, ops, policy] of CR_HOOKS) {
    const x = (which === 'm' ? mwc.webhooks : vwc?.webhooks || []).find((y) => y.name === name);
    const where = `${o}: webhook ${name}`;
    if (!check(x, `${where} registered in the ${which === 'm' ? 'mutating' : 'validating'} configuration`)) continue;
    check(eq(x.admissionReviewVersions, ['v1']) && x.sideEffects === 'None', `${where}: admissionReviewVersions [v1], sideEffects None`);
    check(x.failurePolicy === policy, `${where}: failurePolicy ${policy}`, x.failurePolicy);
    check(x.timeoutSeconds === 5, `${where}: timeoutSeconds 5 (the pod webhook's)`);
    check(x.matchPolicy === 'Equivalent', `${where}: matchPolicy Equivalent (v1alpha1 collectors arrive converted)`);
    check(!x.reinvocationPolicy || x.reinvocationPolicy === 'Never', `${where}: not reinvoked`);
    check(eq(x.rules, [{ apiGroups: ['opentelemetry.io'], apiVersions: [version], resources: [resource], operations: ops, scope: 'Namespaced' }]),
          `${where}: only ${resource} ${ops.join(', ')} in opentelemetry.io`, JSON.stringify(x.rules));
    // A webhook that fails closed must never match what keeps the cluster
    // (or the webhook) running: no core or other group, no subresources.
    check(x.failurePolicy !== 'Fail' || x.rules.every((r) => eq(r.apiGroups, ['opentelemetry.io']) && !r.resources.some((q) => q.includes('/') || q === '*')),
          `${where}: failing closed, it matches opentelemetry.io resources only, no subresource`);
    check(!x.objectSelector || Object.keys(x.objectSelector).length === 0, `${where}: no objectSelector`);
    const ref = x.clientConfig?.service || {};
    check(ref.path === hookPath && !x.clientConfig.url && ref.name === svcRef.name && ref.namespace === svcRef.namespace &&
          (ref.port ?? 443) === 443, `${where}: ${hookPath} through the webhook's Service, port 443`);
    for (const [what, labels, called] of [
      ['kube-system', nsLabels('kube-system'), false], ['kube-public', nsLabels('kube-public'), false],
      ['kube-node-lease', nsLabels('kube-node-lease'), false], ['otel-webhook-system', nsLabels('otel-webhook-system'), false],
      ['an unlabelled app namespace', nsLabels('team-a'), true],
      // the label opts a namespace out of injection, not out of the privilege-escalation check
      ['skip-labelled', nsLabels('team-a', { 'otel-webhook/skip': 'true' }), true],
      ['not opted in (label-opt-in is about pods)', nsLabels('team-b', { 'otel-webhook/enabled': 'false' }), true],
    ]) {
      check(selectorMatches(x.namespaceSelector, labels) === called, `${where}: namespace ${what} is ${called ? '' : 'not '}sent`);
    }
  }

  // Certificates.
  const certVol = dep?.spec.template.spec.volumes.find((v) => v.secret);
  const certMount = ctr?.volumeMounts?.find((m) => m.name === certVol?.name);
  check(certMount && !certMount.subPath, `${o}: the serving Secret is a directory mount (hot reload sees renewals)`);
  check(ctr?.args?.includes(`--tls-cert=${certMount?.mountPath}/tls.crt`) && ctr?.args?.includes(`--tls-key=${certMount?.mountPath}/tls.key`),
        `${o}: --tls-cert/--tls-key point into the mounted Secret`);
  const secretName = certVol?.secret.secretName;
  const inject = mwc.metadata.annotations?.['cert-manager.io/inject-ca-from'];
  if (o === 'self-managed') {
    check(!inject, `${o}: no cert-manager annotation`);
    const job = find('Job', 'otel-webhook-certs');
    check(job, `${o}: the otel-webhook-certs Job`);
    const cron = find('CronJob', 'otel-webhook-certs');
    check(cron?.spec.concurrencyPolicy === 'Forbid', `${o}: certificate renewal CronJob, concurrencyPolicy Forbid`);
    const cm = find('ConfigMap', 'otel-webhook-certs-script');
    const script = cm?.data?.['certs.sh'] || '';
    check(script.includes('$SERVICE-tls') && secretName === `${svc?.metadata.name}-tls`, `${o}: the Job writes the Secret the Deployment mounts`);
    for (const x of [...mwc.webhooks, ...(vwc?.webhooks || [])]) {
      check(new RegExp(`[ "]${x.name.replace(/\./g, '\\.')}[ "\n]`).test(script), `${o}: the Job patches the caBundle of webhook ${x.name}`);
    }
    check(script.includes('ValidatingWebhookConfiguration') && script.includes('MutatingWebhookConfiguration'),
          `${o}: the Job patches both webhook configurations`);
    check(JSON.stringify(job?.spec.template.spec.containers[0].args || []).includes('--server-side'), `${o}: the Job applies server-side`);
  }
  // The conversion webhook: the same Service, port and certificate.
  const crd = find('CustomResourceDefinition', 'opentelemetrycollectors.opentelemetry.io');
  const cref = crd?.spec.conversion?.webhook?.clientConfig?.service || {};
  check(cref.name === svcRef.name && cref.namespace === svcRef.namespace && (cref.port ?? 443) === (svcRef.port ?? 443),
        `${o}: the collector CRD's conversion webhook is the webhook's Service`, JSON.stringify(cref));
  const crdInject = crd?.metadata.annotations?.['cert-manager.io/inject-ca-from'];
  if (o === 'self-managed') {
    const script = find('ConfigMap', 'otel-webhook-certs-script')?.data?.['certs.sh'] || '';
    check(!crdInject, `${o}: no cert-manager annotation on the collector CRD`);
    check(script.includes(`CRD=\${CRD:-${crd?.metadata.name}}`) && script.includes('kind: CustomResourceDefinition'),
          `${o}: the Job patches the collector CRD's conversion caBundle`);
  } else {
    check(crdInject && crdInject === inject, `${o}: cert-manager injects the webhook's CA into the collector CRD`, crdInject);
    check(vwc?.metadata.annotations?.['cert-manager.io/inject-ca-from'] === inject,
          `${o}: cert-manager injects the same CA into the ValidatingWebhookConfiguration`);
  }
  if (o !== 'self-managed') {
    const cert = inject && find('Certificate', inject.split('/')[1]);
    check(cert && cert.metadata.namespace === inject.split('/')[0], `${o}: cert-manager.io/inject-ca-from names our Certificate`, inject);
    check(cert?.spec.secretName === secretName, `${o}: the Certificate's Secret is the one the Deployment mounts`);
    const host = `${svc?.metadata.name}.${svc?.metadata.namespace}.svc`;
    check(cert?.spec.dnsNames?.includes(host), `${o}: the Certificate is valid for ${host}`);
    check(cert?.spec.renewBefore && cert?.spec.duration, `${o}: the Certificate renews automatically (duration, renewBefore)`);
    const issuer = find(cert?.spec.issuerRef.kind || 'Issuer', cert?.spec.issuerRef.name);
    const ca = issuer?.spec.ca && objs.find((x) => x.kind === 'Certificate' && x.spec.secretName === issuer.spec.ca.secretName);
    check(ca?.spec.isCA, `${o}: the serving certificate is signed by our CA Issuer`);
    const root = ca && find(ca.spec.issuerRef.kind || 'Issuer', ca.spec.issuerRef.name);
    check(root?.spec.selfSigned, `${o}: the CA is self-signed by our own Issuer`);
  }

  // The Deployment.
  const ps = dep?.spec.template.spec || {};
  check(dep?.spec.replicas === 2, `${o}: 2 webhook replicas`);
  check((ps.topologySpreadConstraints || []).some((t) => t.topologyKey === 'kubernetes.io/hostname'
        && selectorMatches(t.labelSelector, dep.spec.template.metadata.labels)), `${o}: replicas spread across nodes`);
  const probe = (p, pathWanted) => p?.httpGet?.path === pathWanted && p.httpGet.scheme === 'HTTPS'
    && (p.httpGet.port === 10250 || p.httpGet.port === cport?.name);
  check(probe(ctr?.readinessProbe, '/readyz'), `${o}: readiness on /readyz (HTTPS, 10250)`);
  check(probe(ctr?.livenessProbe, '/healthz'), `${o}: liveness on /healthz (HTTPS, 10250)`);
  check(ctr?.resources?.requests?.cpu && ctr?.resources?.requests?.memory && ctr?.resources?.limits?.memory,
        `${o}: webhook requests cpu and memory, limits memory`);
  const delay = Number((ctr?.args?.find((a) => a.startsWith('--shutdown-delay=')) || '=0').split('=')[1]);
  check(delay > 0 && (ps.terminationGracePeriodSeconds ?? 30) >= delay + 10, `${o}: terminationGracePeriod covers --shutdown-delay + grace`);
  const pdb = objs.find((x) => x.kind === 'PodDisruptionBudget' && selectorMatches(x.spec.selector, dep?.spec.template.metadata.labels || {}));
  check(pdb && (pdb.spec.minAvailable === 1 || pdb.spec.maxUnavailable === 1), `${o}: a PodDisruptionBudget keeps one webhook pod`);
  const rc = find('CronJob', 'otel-reconcile');
  check(rc?.spec.concurrencyPolicy === 'Forbid', `${o}: otel-reconcile CronJob with concurrencyPolicy Forbid`);
  check(JSON.stringify(rc?.spec.jobTemplate.spec.template.spec.containers[0].args) === '["run","--in-cluster"]',
        `${o}: otel-reconcile runs "run --in-cluster"`);

  // Pod security of every workload (the namespace enforces "restricted").
  check(ownNs?.metadata.labels?.['pod-security.kubernetes.io/enforce'] === 'restricted', `${o}: namespace enforces Pod Security "restricted"`);
  for (const x of objs) {
    const pod = x.kind === 'CronJob' ? x.spec.jobTemplate.spec.template.spec
      : ['Deployment', 'Job', 'DaemonSet', 'StatefulSet'].includes(x.kind) ? x.spec.template.spec : null;
    if (!pod) continue;
    const where = `${o}: ${id(x)}`;
    check(pod.securityContext?.runAsNonRoot === true, `${where}: pod runAsNonRoot`);
    check(pod.securityContext?.seccompProfile?.type === 'RuntimeDefault', `${where}: pod seccomp RuntimeDefault`);
    check(!pod.hostNetwork && !pod.hostPID && !pod.hostIPC, `${where}: no host namespaces`);
    check(!(pod.volumes || []).some((v) => v.hostPath), `${where}: no hostPath volumes`);
    check(pod.serviceAccountName && pod.serviceAccountName !== 'default', `${where}: its own ServiceAccount`);
    for (const c of [...(pod.initContainers || []), ...pod.containers]) {
      const sc = c.securityContext || {};
      const cw = `${where} container ${c.name}`;
      check(sc.readOnlyRootFilesystem === true, `${cw}: readOnlyRootFilesystem`);
      check(sc.allowPrivilegeEscalation === false, `${cw}: allowPrivilegeEscalation false`);
      check(JSON.stringify(sc.capabilities?.drop) === '["ALL"]' && !sc.capabilities?.add, `${cw}: all capabilities dropped`);
      check(!sc.privileged && sc.runAsUser !== 0 && sc.runAsNonRoot !== false, `${cw}: not privileged, not root`);
      check(sc.seccompProfile?.type === 'RuntimeDefault' || pod.securityContext?.seccompProfile?.type === 'RuntimeDefault', `${cw}: seccomp RuntimeDefault`);
      check(c.resources?.requests?.memory && c.resources?.limits?.memory, `${cw}: memory request and limit`);
      check(/[:@]/.test(c.image.split('/').pop()) && !c.image.endsWith(':latest'), `${cw}: image pinned to a tag`, c.image);
    }
  }
}

// ------------------------------------------------------------------- 4. RBAC
const contractLines = fs.readFileSync(path.join(ROOT, 'tests/deploy/expected-requests.jsonl'), 'utf8')
  .split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
const contract = rbac.expandContract(contractLines);
check(contract.length > 20, 'the request contract parses', String(contract.length));
// Requests the fake API server recorded during the integration tests:
// OTEL_FAKEAPI_LOG when present, and tests/deploy/fakeapi-sample.jsonl (one
// run of tests/blackbox/cluster_test.py, kept so the log format stays understood).
const recorded = [];
const shapes = new Set(contract.map((r) => `${r.sa} ${rbac.shape(rbac.requestInfo(r.method, r.path))}`));
// A line's "sa" names the caller; otherwise it is the file's binary:
// OTEL_FAKEAPI_RECONCILE_LOG holds otel-reconcile's requests, OTEL_FAKEAPI_OUTDATED_LOG those of
// `otel-webhook outdated` and `explain --kubeconfig` (tests/blackbox/record_test.py), the others the webhook's.
const WEBHOOK_SA = 'otel-webhook-system:otel-webhook', RECONCILE_SA = 'otel-webhook-system:otel-reconcile';
for (const [log, defaultSA] of [[process.env.OTEL_FAKEAPI_LOG, WEBHOOK_SA],
                                [process.env.OTEL_FAKEAPI_RECONCILE_LOG, RECONCILE_SA],
                                [process.env.OTEL_FAKEAPI_OUTDATED_LOG, 'otel-webhook-system:otel-webhook-outdated'],
                                [path.join(ROOT, 'tests/deploy/fakeapi-sample.jsonl'), WEBHOOK_SA]]) {
  if (!log || !fs.existsSync(log)) continue;
  let n = 0;
  for (const l of fs.readFileSync(log, 'utf8').split('\n').filter((x) => x.trim())) {
    const r = JSON.parse(l);
    const method = r.method || r.verb;
    let p = r.path || r.url || r.uri || r.request_uri;
    if (r.query && !p.includes('?')) p += `?${typeof r.query === 'string' ? r.query : new URLSearchParams(r.query)}`;
    const who = r.sa || r.user || r.identity || defaultSA;
    const req = { sa: who.replace(/^system:serviceaccount:/, ''), method, path: p, recorded: true };
    recorded.push(req);
    n++;
    const s = `${req.sa} ${rbac.shape(rbac.requestInfo(req.method, req.path))}`;
    check(shapes.has(s), `recorded request ${method} ${p} is in the contract (tests/deploy/expected-requests.jsonl)`, s);
  }
  check(n > 0, `${log}: requests recorded`);
  console.log(`rbac: ${n} requests recorded by the fake API server (${log})`);
}
const ourSAs = ['otel-webhook-system:otel-webhook', 'otel-webhook-system:otel-reconcile', 'otel-webhook-system:otel-webhook-certs',
                'otel-webhook-system:otel-webhook-outdated'];
const delegated = (role) => role.metadata.annotations?.['otel-webhook.opentelemetry.io/rbac-purpose'] === 'delegated';
for (const o of OVERLAYS) {
  const objs = [...rendered[o]];
  if (o === 'restrict-secrets') {
    // Secrets are readable only where a RoleBinding says so (docs/install.md): without
    // one, the webhook's Secret check is refused; with one, allowed there only.
    const g0 = rbac.grants(objs, 'otel-webhook-system:otel-webhook');
    const a = rbac.requestInfo('GET', '/api/v1/namespaces/default/secrets/otel-exporter-tls');
    check(!rbac.authorize(objs, 'otel-webhook-system:otel-webhook', a, g0).allowed, `${o}: no cluster-wide get on Secrets`);
    // The administrator binds it where Secrets are checked (every namespace
    // the contract and the recorded requests read Secrets in).
    const nss = new Set([...contract, ...recorded].filter((r) => r.sa === 'otel-webhook-system:otel-webhook')
      .map((r) => rbac.requestInfo(r.method, r.path)).filter((x) => x.resource === 'secrets').map((x) => x.namespace));
    for (const ns of nss) {
      objs.push({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding',
                  metadata: { name: 'otel-webhook-secrets', namespace: ns },
                  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'otel-webhook-secrets' },
                  subjects: [{ kind: 'ServiceAccount', name: 'otel-webhook', namespace: 'otel-webhook-system' }] });
    }
    const b = rbac.requestInfo('GET', '/api/v1/namespaces/never-bound/secrets/otel-exporter-tls');
    check(!rbac.authorize(objs, 'otel-webhook-system:otel-webhook', b).allowed, `${o}: the RoleBinding allows its own namespace only`);
  }
  const sas = ourSAs.filter((sa) => objs.some((x) => x.kind === 'ServiceAccount' && `${x.metadata.namespace}:${x.metadata.name}` === sa));
  check(sas.includes(ourSAs[0]) && sas.includes(ourSAs[1]), `${o}: webhook and reconcile ServiceAccounts`);
  check(sas.includes(ourSAs[2]) === (o === 'self-managed'), `${o}: the certs ServiceAccount only with self-managed certificates`);
  check(sas.includes(ourSAs[3]) === (o === 'outdated'), `${o}: the outdated ServiceAccount only in the outdated overlay`);
  // Every ServiceAccount a pod runs as is one of ours.
  for (const x of objs) {
    const pod = x.kind === 'CronJob' ? x.spec.jobTemplate.spec.template.spec : x.spec?.template?.spec;
    if (pod?.serviceAccountName) check(sas.includes(`${x.metadata.namespace}:${pod.serviceAccountName}`), `${o}: ${id(x)} runs as a checked ServiceAccount`);
  }
  for (const sa of sas) {
    const g = rbac.grants(objs, sa);
    for (const m of g.filter((x) => x.missing)) check(false, `${o}: ${sa}: binding ${id(m.binding)} refers to missing ${m.missing}`);
    const reqs = [...contract, ...recorded].filter((r) => r.sa === sa);
    check(reqs.length > 0, `${o}: ${sa} has requests in the contract`);
    const used = new Set();
    for (const r of reqs) {
      for (const a of rbac.checksOf(r)) {
        const res = rbac.authorize(objs, sa, a, g);
        check(res.allowed, `${o}: ${sa} may ${a.verb} ${a.nonResource ? a.url : `${a.group || 'core'}/${a.resource}${a.subresource ? `/${a.subresource}` : ''}${a.namespace ? ` in ${a.namespace}` : ''}${a.name ? ` (${a.name})` : ''}`}`,
              `${r.method} ${r.path}${r.recorded ? ' (recorded)' : ''}`);
        for (const x of res.by) for (const at of rbac.atoms(x.rule)) if (rbac.atomCovers(at, a)) used.add(JSON.stringify([x.role.metadata.name, x.index, at]));
      }
    }
    // Nothing more: every permission granted is used by some request
    // (roles marked delegated are held to be granted, see below).
    for (const x of g.filter((y) => y.rule && !delegated(y.role))) {
      for (const at of rbac.atoms(x.rule)) {
        check(used.has(JSON.stringify([x.role.metadata.name, x.index, at])),
              `${o}: ${sa}: ${x.role.kind} ${x.role.metadata.name} grants ${at.verb} ${at.url || `${at.group || 'core'}/${at.resource}${at.name ? ` (${at.name})` : ''}`} that no request uses`);
      }
    }
    check(!g.some((y) => y.rule && ['escalate', 'bind', 'impersonate', '*'].some((v) => y.rule.verbs.includes(v))),
          `${o}: ${sa} has no escalate, bind, impersonate or * verbs`);
  }
  // The delegated rules: exactly the fixed rules of reconcile.md §4.2.
  const del = objs.filter((x) => x.kind === 'ClusterRole' && delegated(x));
  const want = [
    ['', 'nodes/stats', 'get'], ['', 'nodes/proxy', 'get'],
    ...['events', 'namespaces', 'namespaces/status', 'nodes', 'nodes/spec', 'persistentvolumeclaims', 'persistentvolumes', 'pods',
        'pods/status', 'replicationcontrollers', 'replicationcontrollers/status', 'resourcequotas', 'services']
      .flatMap((r) => ['get', 'list', 'watch'].map((v) => ['', r, v])),
    ...[['apps', ['daemonsets', 'deployments', 'replicasets', 'statefulsets']], ['extensions', ['daemonsets', 'deployments', 'replicasets']],
        ['batch', ['jobs', 'cronjobs']], ['autoscaling', ['horizontalpodautoscalers']]]
      .flatMap(([gr, rs]) => rs.flatMap((r) => ['get', 'list', 'watch'].map((v) => [gr, r, v]))),
    ...['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'].map((v) => ['coordination.k8s.io', 'leases', v]),
  ].map((x) => x.join(' ')).sort();
  const have = [...new Set(del.flatMap((r) => r.rules.flatMap((ru) => rbac.atoms(ru).map((a) => `${a.group} ${a.resource} ${a.verb}`))))].sort();
  check(JSON.stringify(have) === JSON.stringify(want), `${o}: the delegated collector rules are reconcile.md §4.2's`,
        `extra: ${have.filter((x) => !want.includes(x)).join(', ')}; missing: ${want.filter((x) => !have.includes(x)).join(', ')}`);
}

// ------------------------------------------------------------- 5. monitoring
// docs/metrics.md's "## Metrics" section: its metrics tables (every family the
// webhook serves, type and labels) and its recommended alerts.
const metricsDoc = fs.readFileSync(path.join(ROOT, 'docs', 'metrics.md'), 'utf8');
const metricsSection = metricsDoc.split('\n## Metrics\n')[1]?.split('\n## ')[0] || '';
const families = new Map();
for (const m of metricsSection.matchAll(/^\| `(otel_webhook_[a-z0-9_]+)` \| (counter|gauge|histogram) \|/gm)) families.set(m[1], m[2]);
check(families.size > 20, 'docs/metrics.md: the metrics tables list the families', String(families.size));
const alertsSection = metricsSection.split('\n### Recommended alerts\n')[1]?.split('\n### ')[0] || '';
const docAlerts = [...alertsSection.matchAll(/^\| `([A-Za-z]+)` \| `([^`]+)` \| (\w+) \|/gm)]
  .map((m) => ({ alert: m[1], expr: m[2], for: m[3] }));
check(docAlerts.length >= 5, 'docs/metrics.md: the recommended alerts table', String(docAlerts.length));
// Metrics named in expressions that do not come from the webhook: Prometheus'
// own, and kube-state-metrics' (docs/metrics.md says the alert needs it).
const EXTERNAL = new Set(['up', 'kube_cronjob_status_last_successful_time']);
// A family as an expression may name it: a histogram's series end in _bucket, _sum, _count.
function familyOf(name) {
  if (families.has(name)) return name;
  const m = name.match(/^(.*)_(bucket|sum|count)$/);
  return m && families.get(m[1]) === 'histogram' ? m[1] : null;
}
function promqlMetrics(expr) {
  const tree = promql.parse(expr);
  let error = false;
  const names = [];
  tree.iterate({ enter: (n) => {
    if (n.type.isError) error = true;
    if (n.name === 'VectorSelector') {
      const id = n.node.getChild('Identifier');
      if (id) names.push(expr.slice(id.from, id.to));
      else error = true; // {__name__=...}: spell the metric out
    }
  } });
  return { error, names };
}
{
  // The check itself: a typo in a name and a broken expression are caught.
  const bad = promqlMetrics('rate(otel_webhook_request_total[5m]) > 0');
  check(!bad.error && bad.names.length === 1 && !familyOf(bad.names[0]), 'alert check: a misspelt metric is not a family');
  check(promqlMetrics('rate(otel_webhook_requests_total[5m] > 0').error, 'alert check: a broken expression is refused');
  check(familyOf('otel_webhook_request_duration_seconds_bucket') === 'otel_webhook_request_duration_seconds',
        'alert check: a histogram\'s _bucket series is its family');
}
const mon = rendered.monitoring || [];
{
  const svcMons = mon.filter((o) => o.kind === 'ServiceMonitor');
  check(svcMons.length === 1, 'monitoring: one ServiceMonitor', String(svcMons.length));
  const sm = svcMons[0];
  const dep = mon.find((x) => x.kind === 'Deployment' && x.metadata.name === 'otel-webhook');
  const ctr = dep?.spec.template.spec.containers[0];
  const svcs = mon.filter((x) => x.kind === 'Service' && selectorMatches(sm?.spec.selector, x.metadata.labels || {})
    && (sm?.spec.namespaceSelector?.matchNames || [sm?.metadata.namespace]).includes(x.metadata.namespace));
  check(svcs.length === 1 && svcs[0].metadata.name === 'otel-webhook', 'monitoring: the ServiceMonitor selects the webhook\'s Service, and only it',
        svcs.map(id).join(', '));
  const svc = svcs[0];
  check(selectorMatches({ matchLabels: svc?.spec.selector }, dep?.spec.template.metadata.labels || {}), 'monitoring: that Service selects the webhook pods');
  const eps = sm?.spec.endpoints || [];
  check(eps.length === 1, 'monitoring: one endpoint');
  const ep = eps[0] || {};
  const sport = svc?.spec.ports.find((p) => p.name === ep.port);
  check(sport, `monitoring: endpoint port ${ep.port} is a port of the Service`);
  const cport = ctr?.ports?.find((p) => p.name === sport?.targetPort || p.containerPort === sport?.targetPort);
  const listen = (ctr?.args || []).find((a) => a.startsWith('--listen='));
  check(cport && listen?.endsWith(`:${cport.containerPort}`), 'monitoring: it reaches the port serve listens on', `${cport?.containerPort} ${listen}`);
  check(ep.scheme === 'https' && ep.path === '/metrics', 'monitoring: HTTPS, /metrics (the serving port speaks TLS only)', `${ep.scheme} ${ep.path}`);
  const certVol = dep?.spec.template.spec.volumes.find((v) => v.secret);
  const caRef = ep.tlsConfig?.ca?.secret;
  check(caRef?.name === certVol?.secret.secretName && caRef?.key === 'ca.crt' && sm.metadata.namespace === dep?.metadata.namespace,
        'monitoring: the CA is the serving Secret\'s ca.crt, in its namespace', JSON.stringify(ep.tlsConfig));
  check(!ep.tlsConfig?.insecureSkipVerify, 'monitoring: the certificate is verified');
  const cert = mon.find((x) => x.kind === 'Certificate' && x.spec.secretName === certVol?.secret.secretName);
  check(cert?.spec.dnsNames?.includes(ep.tlsConfig?.serverName), 'monitoring: serverName is a name the serving certificate is for',
        `${ep.tlsConfig?.serverName} not in ${cert?.spec.dnsNames}`);
  check(ep.tlsConfig?.serverName === `${svc?.metadata.name}.${svc?.metadata.namespace}.svc`,
        'monitoring: serverName is the Service\'s name (self-managed certificates are issued for it too)');
  // The self-managed Secret has a ca.crt too (tests/deploy/extra.py runs certs.sh).
  const sm2 = rendered['self-managed'] || [];
  const smDep = sm2.find((x) => x.kind === 'Deployment' && x.metadata.name === 'otel-webhook');
  check(smDep?.spec.template.spec.volumes.find((v) => v.secret)?.secret.secretName === caRef?.name,
        'monitoring: deploy/monitoring fits the self-managed overlay too (the same Secret)');
}
{
  const rules = mon.filter((o) => o.kind === 'PrometheusRule');
  check(rules.length === 1, 'monitoring: one PrometheusRule', String(rules.length));
  const alerts = rules.flatMap((r) => r.spec.groups.flatMap((g) => g.rules)).filter((r) => r.alert);
  const norm = (e) => String(e).replace(/\s+/g, ' ').trim();
  check(JSON.stringify(alerts.map((a) => a.alert)) === JSON.stringify(docAlerts.map((a) => a.alert)),
        'monitoring: the PrometheusRule\'s alerts are docs/metrics.md\'s, in its order',
        `rule: ${alerts.map((a) => a.alert).join(', ')}; docs/metrics.md: ${docAlerts.map((a) => a.alert).join(', ')}`);
  for (const a of alerts) {
    const doc = docAlerts.find((r) => r.alert === a.alert);
    check(doc && norm(doc.expr) === norm(a.expr), `monitoring: ${a.alert}: docs/metrics.md's expression`, `${a.expr} / ${doc?.expr}`);
    check(doc && (doc.for === '0m' ? !a.for : doc.for === a.for), `monitoring: ${a.alert}: docs/metrics.md's "for"`, `${a.for} / ${doc?.for}`);
    check(['critical', 'warning'].includes(a.labels?.severity) && a.annotations?.summary && a.annotations?.description,
          `monitoring: ${a.alert}: a severity, a summary and a description`);
    const { error, names } = promqlMetrics(a.expr);
    check(!error, `monitoring: ${a.alert}: the expression parses as PromQL`, a.expr);
    check(names.length > 0, `monitoring: ${a.alert}: names a metric`);
    for (const n of names) {
      check(familyOf(n) || EXTERNAL.has(n), `monitoring: ${a.alert}: ${n} is served by the webhook (docs/metrics.md's tables)${EXTERNAL.size ? ' or named as external' : ''}`);
    }
  }
}

console.log(`COUNTS ${passed} ${failed}`);
