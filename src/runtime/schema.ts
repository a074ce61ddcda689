// The schema contract for inputs and args: any Standard Schema (zod 4 implements it), validated with readable paths.

export interface StandardIssue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

export interface StandardSchema<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (
      value: unknown,
    ) =>
      | { readonly value: Output; readonly issues?: undefined }
      | { readonly issues: ReadonlyArray<StandardIssue> }
      | Promise<{ readonly value: Output; readonly issues?: undefined } | { readonly issues: ReadonlyArray<StandardIssue> }>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  };
}

export type InferOutput<S> = S extends StandardSchema<unknown, infer O> ? O : never;
export type InferInput<S> = S extends StandardSchema<infer I, unknown> ? I : never;

export function isStandardSchema(v: unknown): v is StandardSchema {
  return typeof v === 'object' && v !== null && typeof (v as { '~standard'?: { validate?: unknown } })['~standard']?.validate === 'function';
}

/** Formats issues as `path: message` lines, the way a person reads them. */
export function formatIssues(issues: ReadonlyArray<StandardIssue>): string {
  return issues
    .map((i) => {
      const path = (i.path ?? [])
        .map((p) => (typeof p === 'object' ? p.key : p))
        .map(String)
        .join('.');
      return path ? `${path}: ${i.message}` : i.message;
    })
    .join('; ');
}

export type Validated<T> = { ok: true; value: T } | { ok: false; message: string };

export async function validate<T>(schema: StandardSchema<unknown, T>, value: unknown): Promise<Validated<T>> {
  return validateNow(schema, value);
}

/** validate, without a turn of the event loop when the schema answers synchronously (zod's do, unless refined async). */
export function validateNow<T>(schema: StandardSchema<unknown, T>, value: unknown): Validated<T> | Promise<Validated<T>> {
  const result = schema['~standard'].validate(value);
  if (result instanceof Promise) return result.then(validated);
  return validated(result);
}

function validated<T>(result: { readonly value: T; readonly issues?: undefined } | { readonly issues: ReadonlyArray<StandardIssue> }): Validated<T> {
  if (result.issues) return { ok: false, message: formatIssues(result.issues) };
  return { ok: true, value: result.value };
}
