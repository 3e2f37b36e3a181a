// tests/deploy/strict.mjs - unknown-field detection for Kubernetes objects.
//
// kubernetes-models' validators check types, enums and required fields but
// let unknown fields through, and so does the API server by default (it drops
// them, with at most a warning): a misspelt `readinesProbe` would be silently
// ignored. The models' TypeScript declarations list every field of every
// type, so this walks an object along them and reports each field the type
// does not have (like `kubectl apply --validate=strict`, offline).
import fs from 'node:fs';
import path from 'node:path';

const cache = new Map(); // .d.ts file -> { props: Map(name -> type text) } | null

function resolveSpec(spec, fromFile, nodeModules) {
  const base = spec.startsWith('.') ? path.resolve(path.dirname(fromFile), spec) : path.join(nodeModules, spec);
  const f = base.replace(/\.js$/, '') + '.d.ts';
  return fs.existsSync(f) ? f : null;
}

function parse(file, nodeModules) {
  if (cache.has(file)) return cache.get(file);
  const src = fs.readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
  const imports = new Map();
  for (const m of src.matchAll(/import \{ ([^}]+) \} from "([^"]+)"/g)) {
    for (const n of m[1].split(',').map((s) => s.trim())) imports.set(n, m[2]);
  }
  const m = src.match(/export interface \w+(?: extends ([\w, ]+))? \{/);
  if (!m) { cache.set(file, null); return null; }
  let i = m.index + m[0].length, depth = 1, cur = '';
  const props = new Map();
  for (; i < src.length && depth > 0; i++) {
    const c = src[i];
    if (c === '{' || c === '<') depth++;
    if (c === '}' || c === '>') depth--;
    if (depth === 0) break;
    if (c === ';' && depth === 1) {
      const pm = cur.trim().match(/^"([^"]+)"\??:\s*([\s\S]+)$/);
      if (pm) props.set(pm[1], { text: pm[2].replace(/\s+/g, ' ').trim() });
      cur = '';
    } else cur += c;
  }
  const info = { props, imports, file };
  for (const p of props.values()) p.info = info;
  cache.set(file, info);
  // Inherited fields (IssuerSpec extends IssuerConfig, ...).
  for (const parent of (m[1] || '').split(',').map((s) => s.trim()).filter((s) => imports.has(s))) {
    const f = resolveSpec(imports.get(parent), file, nodeModules);
    const sup = f && parse(f, nodeModules);
    if (sup) for (const [k, v] of sup.props) if (!props.has(k)) props.set(k, v);
  }
  return info;
}

function typeOf(text, info, nodeModules) {
  let t = text.trim();
  const arr = t.match(/^Array<(.+)>$/);
  if (arr) return { array: typeOf(arr[1], info, nodeModules) };
  const map = t.match(/^\{ \[key: string\]: (.+?);? \}$/);
  if (map) return { map: typeOf(map[1], info, nodeModules) };
  if (/^I\w+$/.test(t) && info.imports.has(t)) {
    const f = resolveSpec(info.imports.get(t), info.file, nodeModules);
    const sub = f && parse(f, nodeModules);
    return sub ? { ref: sub } : { leaf: true };
  }
  return { leaf: true };
}

function walk(value, type, at, nodeModules, errs) {
  if (value === null || value === undefined || type.leaf) return;
  if (type.array) { if (Array.isArray(value)) value.forEach((v, i) => walk(v, type.array, `${at}[${i}]`, nodeModules, errs)); return; }
  if (type.map) { if (typeof value === 'object') for (const [k, v] of Object.entries(value)) walk(v, type.map, `${at}.${k}`, nodeModules, errs); return; }
  if (type.ref && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (!type.ref.props.has(k)) { errs.push(`${at}.${k}: unknown field`); continue; }
      const p = type.ref.props.get(k);
      walk(v, typeOf(p.text, p.info, nodeModules), `${at}.${k}`, nodeModules, errs);
    }
  }
}

// Unknown fields of obj, given the .d.ts file of its kind.
export function unknownFields(obj, dtsFile, nodeModules) {
  const info = parse(dtsFile, nodeModules);
  if (!info) return [`no declarations in ${dtsFile}`];
  const errs = [];
  walk(obj, { ref: info }, '', nodeModules, errs);
  return errs;
}
