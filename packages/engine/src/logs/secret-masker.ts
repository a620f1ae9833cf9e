export const MASK = '*******';

/** Replaces every secret value with the mask. Longer secrets first, so a secret containing another is masked whole. */
export class SecretMasker {
  private readonly values: string[];

  constructor(secrets: Iterable<string>) {
    this.values = [...new Set([...secrets].filter((s) => s.length > 0))].sort((a, b) => b.length - a.length);
  }

  get active(): boolean {
    return this.values.length > 0;
  }

  mask(text: string): string {
    let out = text;
    for (const value of this.values) if (out.includes(value)) out = out.split(value).join(MASK);
    return out;
  }
}
