/**
 * Size limits of a definition, checked before the expensive work they bound (YAML parsing,
 * normalising steps, expanding values), each refused with an error naming the limit.
 * Without them a 0.8 MB spec of 20,000 steps took 85 MB of heap to validate, and a chain of
 * env values that each double the previous one grew the process to 794 MB before failing.
 */

/** Largest spec text, in UTF-8 bytes: a definition is a page of YAML, not a data file. */
export const MAX_SPEC_BYTES = 1024 * 1024;
/** Most YAML documents in one spec file: the DAG and its local DAGs. */
export const MAX_DAGS_PER_FILE = 100;
/** Most steps in one DAG (handlers not counted). */
export const MAX_STEPS_PER_DAG = 2000;
/** Largest value a `${...}` expansion may produce, in characters. */
export const MAX_EXPANDED_VALUE_LENGTH = 1024 * 1024;
