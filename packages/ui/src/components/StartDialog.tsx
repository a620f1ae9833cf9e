import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { api, unwrap, type Schemas } from '../api/client';
import { ErrorNote, Loading, useAction } from './common';
import { useResource } from '../lib/use-resource';

interface Field {
  name: string;
  type: string;
  description?: string;
  default?: string;
  options?: string[];
  required: boolean;
  minimum?: number;
  maximum?: number;
  pattern?: string;
}

/** `a="1" b="two words"` -> {a: '1', b: 'two words'} (the contract's defaultParams form). */
function parseDefaultParams(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const match of text.matchAll(/([A-Za-z_][\w-]*)="((?:[^"\\]|\\.)*)"/g)) out[match[1] ?? ''] = (match[2] ?? '').replace(/\\(.)/g, '$1');
  return out;
}

/** A schema value as form text: objects as JSON, not `[object Object]`. */
const asText = (value: unknown): string => (typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value));

type JsonSchemaProperty = { type?: string; description?: string; default?: unknown; enum?: unknown[]; minimum?: number; maximum?: number; pattern?: string };

/** Form fields from paramSchema when present (the contract says prefer it), else paramDefs, else the names. */
function fieldsOf(dag: Schemas['DagDetail']): Field[] {
  const defaults = parseDefaultParams(dag.defaultParams);
  const schema = dag.paramSchema as { properties?: Record<string, JsonSchemaProperty>; required?: string[] } | undefined;
  if (schema?.properties !== undefined) {
    return Object.entries(schema.properties).map(([name, p]) => ({
      name,
      type: p.type ?? 'string',
      ...(p.description !== undefined ? { description: p.description } : {}),
      ...(p.default !== undefined ? { default: asText(p.default) } : defaults[name] !== undefined ? { default: defaults[name] } : {}),
      ...(p.enum !== undefined ? { options: p.enum.map(asText) } : {}),
      ...(p.minimum !== undefined ? { minimum: p.minimum } : {}),
      ...(p.maximum !== undefined ? { maximum: p.maximum } : {}),
      ...(p.pattern !== undefined ? { pattern: p.pattern } : {}),
      required: schema.required?.includes(name) ?? false,
    }));
  }
  if (dag.paramDefs.length > 0) {
    return dag.paramDefs.map((d) => ({
      name: d.name,
      type: d.type,
      ...(d.description !== undefined ? { description: d.description } : {}),
      ...(d.default !== undefined ? { default: String(d.default) } : defaults[d.name] !== undefined ? { default: defaults[d.name] } : {}),
      ...(d.enum !== undefined ? { options: d.enum.map(String) } : {}),
      ...(d.minimum !== undefined ? { minimum: d.minimum } : {}),
      ...(d.maximum !== undefined ? { maximum: d.maximum } : {}),
      ...(d.pattern !== undefined ? { pattern: d.pattern } : {}),
      required: false,
    }));
  }
  return dag.params.map((name) => ({ name, type: 'string', ...(defaults[name] !== undefined ? { default: defaults[name] } : {}), required: false }));
}

function coerce(field: Field, raw: string): unknown {
  if (field.type === 'integer' || field.type === 'number') return raw === '' ? raw : Number(raw);
  if (field.type === 'boolean') return raw === 'true';
  return raw;
}

function ParamInput({ field, value, onChange }: { field: Field; value: string; onChange: (v: string) => void }) {
  const id = `param-${field.name}`;
  const control =
    field.options !== undefined ? (
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        {field.options.map((o) => (
          <option key={o}>{o}</option>
        ))}
      </select>
    ) : field.type === 'boolean' ? (
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        <option>true</option>
        <option>false</option>
      </select>
    ) : (
      <input
        id={id}
        type={field.type === 'integer' || field.type === 'number' ? 'number' : 'text'}
        value={value}
        required={field.required}
        {...(field.minimum !== undefined ? { min: field.minimum } : {})}
        {...(field.maximum !== undefined ? { max: field.maximum } : {})}
        {...(field.pattern !== undefined ? { pattern: field.pattern } : {})}
        onChange={(e) => onChange(e.target.value)}
      />
    );
  return (
    <div className="field">
      <label htmlFor={id}>
        {field.name}
        {field.required ? ' *' : ''}
      </label>
      {control}
      {field.description !== undefined ? <small className="muted">{field.description}</small> : null}
    </div>
  );
}

/** Start a DAG with its params: a form built from its parameter definitions, in a modal dialog. */
export function StartDialog({ fileName, onClose }: { fileName: string; onClose: () => void }) {
  const navigate = useNavigate();
  const dialog = useRef<HTMLDialogElement>(null);
  const detail = useResource(() => unwrap(api.GET('/dags/{fileName}', { params: { path: { fileName } } })), [fileName]);
  const [values, setValues] = useState<Record<string, string>>({});
  const [run, busy, error] = useAction();
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  const dag = detail.data?.dag as Schemas['DagDetail'] | undefined;
  const fields = dag !== undefined && 'paramDefs' in dag ? fieldsOf(dag) : [];
  const valueOf = (f: Field) => values[f.name] ?? f.default ?? (f.options?.[0] ?? '');
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const params = Object.fromEntries(fields.map((f) => [f.name, coerce(f, valueOf(f))]));
    await run(async () => {
      const body = fields.length > 0 ? { params: JSON.stringify(params) } : {};
      const started = await unwrap(api.POST('/dags/{fileName}/start', { params: { path: { fileName } }, body }));
      onClose();
      void navigate(`/runs/${encodeURIComponent(dag?.name ?? fileName)}/${encodeURIComponent(started.dagRunId)}`);
    });
  };
  return (
    <dialog ref={dialog} onClose={onClose} aria-labelledby="start-title">
      <form onSubmit={(e) => void submit(e)}>
        <h2 id="start-title">Start {fileName}</h2>
        {detail.loading ? <Loading what="parameters" /> : null}
        <ErrorNote error={detail.error ?? error} />
        {fields.length === 0 && !detail.loading ? <p className="muted">This DAG takes no parameters.</p> : null}
        {fields.map((f) => (
          <ParamInput key={f.name} field={f} value={valueOf(f)} onChange={(v) => setValues((s) => ({ ...s, [f.name]: v }))} />
        ))}
        <div className="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={busy || detail.loading}>
            Start run
          </button>
        </div>
      </form>
    </dialog>
  );
}
