import { useEffect, useRef } from 'react';
import { EditorView, basicSetup } from 'codemirror';
import { yaml } from '@codemirror/lang-yaml';
import { linter, lintGutter, type Diagnostic } from '@codemirror/lint';
import { isNode, parseDocument } from 'yaml';
import { api, unwrap } from '../api/client';

/** The line a validation message names (`line 3`, `at line 3`, `3:5`), if any. */
function lineOf(message: string): number | undefined {
  const match = /\bline (\d+)/i.exec(message) ?? /^(\d+):\d+/.exec(message);
  return match?.[1] !== undefined ? Number(match[1]) : undefined;
}

/** `steps[1].bogus: unknown field` -> ['steps', 1, 'bogus']. */
function pathOf(message: string): Array<string | number> | undefined {
  const match = /^([A-Za-z_][\w-]*(?:\[\d+\]|\.[A-Za-z_][\w-]*)*)\s*:/.exec(message);
  if (match?.[1] === undefined) return undefined;
  return [...match[1].matchAll(/([A-Za-z_][\w-]*)|\[(\d+)\]/g)].map((m) => (m[2] !== undefined ? Number(m[2]) : (m[1] ?? '')));
}

/** The offset in the text where the value at `path` begins, or its nearest ancestor's. */
function offsetOf(text: string, path: Array<string | number>): number | undefined {
  const doc = parseDocument(text);
  for (let n = path.length; n > 0; n--) {
    const node: unknown = doc.getIn(path.slice(0, n), true);
    if (isNode(node) && node.range !== undefined && node.range !== null) return node.range[0];
  }
  return undefined;
}

function diagnosticsFor(view: EditorView, errors: string[]): Diagnostic[] {
  const doc = view.state.doc;
  const text = doc.toString();
  return errors.map((message) => {
    const line = lineOf(message);
    const path = line === undefined ? pathOf(message) : undefined;
    const offset = path !== undefined ? offsetOf(text, path) : undefined;
    const at = offset !== undefined ? doc.lineAt(offset) : doc.line(Math.min(Math.max(line ?? 1, 1), doc.lines));
    return { from: at.from, to: at.to, severity: 'error', message };
  });
}

/** A validation error and the line it is shown at. */
export interface Problem {
  line: number;
  message: string;
}

/**
 * CodeMirror 6 with YAML highlighting; every pause in typing asks POST /dags/validate and shows
 * its errors at their line.
 */
export default function SpecEditor({ value, name, onChange, onValidated }: { value: string; name: string; onChange: (text: string) => void; onValidated?: (problems: Problem[]) => void }) {
  const host = useRef<HTMLDivElement>(null);
  const callbacks = useRef({ onChange, onValidated });
  callbacks.current = { onChange, onValidated };
  useEffect(() => {
    if (host.current === null) return undefined;
    const validate = linter(
      async (view) => {
        const spec = view.state.doc.toString();
        const result = await unwrap(api.POST('/dags/validate', { body: { spec, name } }));
        const diagnostics = diagnosticsFor(view, result.errors);
        callbacks.current.onValidated?.(diagnostics.map((d) => ({ line: view.state.doc.lineAt(d.from).number, message: d.message })));
        return diagnostics;
      },
      { delay: 400 },
    );
    const view = new EditorView({
      doc: value,
      parent: host.current,
      extensions: [
        basicSetup,
        yaml(),
        lintGutter(),
        validate,
        EditorView.contentAttributes.of({ 'aria-label': 'DAG specification (YAML)' }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) callbacks.current.onChange(update.state.doc.toString());
        }),
      ],
    });
    return () => view.destroy();
    // The editor owns the text once created (value is only its start); a new DAG makes a new editor.
  }, [name]);
  return <div ref={host} className="editor" data-testid="spec-editor" />;
}
