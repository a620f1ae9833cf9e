export const MASK = '*******';

/** How `value` appears inside a JSON string (a PEM key or JSON credential has `"`, `\` or newlines escaped there). */
function jsonEscaped(value: string): string {
  return JSON.stringify(value).slice(1, -1);
}

/**
 * Replaces every secret value with the mask, in its raw form and in its JSON-escaped form (params
 * given as an object reach a child as JSON text). Longer forms first, so a secret containing
 * another is masked whole.
 */
export class SecretMasker {
  private readonly secrets: Array<{ value: string; forms: string[] }>;
  private readonly values: string[];

  constructor(secrets: Iterable<string>) {
    this.secrets = [...new Set([...secrets].filter((s) => s.length > 0))].map((value) => ({ value, forms: [...new Set([value, jsonEscaped(value)])] }));
    this.values = [...new Set(this.secrets.flatMap((s) => s.forms))].sort((a, b) => b.length - a.length);
  }

  get active(): boolean {
    return this.values.length > 0;
  }

  mask(text: string): string {
    let out = text;
    for (const value of this.values) if (out.includes(value)) out = out.split(value).join(MASK);
    return out;
  }

  /** The secret values that occur in `texts`, raw or JSON-escaped (what a child run must mask when handed them). */
  valuesIn(...texts: string[]): string[] {
    return this.secrets.filter((s) => s.forms.some((form) => texts.some((text) => text.includes(form)))).map((s) => s.value);
  }

  /**
   * How much of `text` can be masked and written now: all of it but the longest end that is the
   * start of a secret, which the next write may complete. A secret cut by a write boundary is
   * then masked whole once its rest arrives.
   */
  safeLength(text: string): number {
    let held = 0;
    for (const value of this.values) {
      const first = value[0] ?? '';
      // Candidate starts, leftmost first: the first that matches is the longest held end.
      for (let at = text.indexOf(first, Math.max(0, text.length - value.length + 1)); at !== -1 && text.length - at > held; at = text.indexOf(first, at + 1)) {
        if (value.startsWith(text.slice(at))) {
          held = text.length - at;
          break;
        }
      }
    }
    return text.length - held;
  }
}
