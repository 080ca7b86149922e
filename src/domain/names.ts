// Names as Kubernetes checks them (k8s.io/apimachinery/pkg/util/validation), with its wording,
// so a name fencer accepts is one kubectl accepts and the other way round.

const DNS1123_LABEL_MAX = 63;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const LABEL_VALUE_MAX = 63;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN_MAX = 253;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Lowercase letters, digits and '-', starting and ending with an alphanumeric, at most 63. */
export function isDns1123Label(value: string): boolean {
  return value.length <= DNS1123_LABEL_MAX && DNS1123_LABEL.test(value);
}

/**
 * Lowercase labels joined by dots, at most 253: a Kubernetes Node's name (`ip-10-0-1-2.ec2.internal`),
 * which is what an agent of the DaemonSet in deploy/ calls its node.
 */
export function isDns1123Subdomain(value: string): boolean {
  return value.length <= DNS1123_SUBDOMAIN_MAX && DNS1123_SUBDOMAIN.test(value);
}

/** Why `value` is not a DNS-1123 label; empty when it is one. */
export function dns1123LabelErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > DNS1123_LABEL_MAX) errors.push(`must be no more than ${DNS1123_LABEL_MAX} characters`);
  if (!DNS1123_LABEL.test(value)) {
    errors.push(
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must " +
        "start and end with an alphanumeric character (e.g. 'my-name', or '123-abc', regex used for " +
        "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    );
  }
  return errors;
}

/** Why `key` is not a label key (`[prefix/]name`, e.g. `app.kubernetes.io/name`); empty when it is one. */
export function labelKeyErrors(key: string): string[] {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  const errors: string[] = [];
  if (prefix !== undefined) {
    if (prefix.length === 0) errors.push('prefix part must be non-empty');
    else if (prefix.length > DNS1123_SUBDOMAIN_MAX || !DNS1123_SUBDOMAIN.test(prefix)) {
      errors.push(
        "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' " +
          "or '.', and must start and end with an alphanumeric character (e.g. 'example.com')",
      );
    }
  }
  if (name.length === 0) errors.push('name part must be non-empty');
  else if (name.length > LABEL_VALUE_MAX) errors.push(`name part must be no more than ${LABEL_VALUE_MAX} characters`);
  else if (!QUALIFIED_NAME.test(name)) {
    errors.push(
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an " +
        "alphanumeric character (e.g. 'MyName', or 'my.name', or '123-abc')",
    );
  }
  return errors;
}

/** Why `value` is not a label value (may be empty); empty when it is one. */
export function labelValueErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > LABEL_VALUE_MAX) errors.push(`must be no more than ${LABEL_VALUE_MAX} characters`);
  if (value !== '' && !QUALIFIED_NAME.test(value)) {
    errors.push(
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and " +
        "must start and end with an alphanumeric character (e.g. 'MyValue', or 'my_value', or '12345')",
    );
  }
  return errors;
}

/**
 * A label selector of equalities (`a=b,c==d`, as kubectl -l writes them) into the labels it
 * requires; throws with what is wrong for anything else (set-based selectors are not served).
 */
export function parseLabelSelector(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')) {
    const match = /^([^=!\s]+)\s*==?\s*([^=!\s]*)$/.exec(part);
    if (!match) throw new Error(`labelSelector: "${part}" is not supported (only key=value, comma-separated)`);
    const [, key = '', value = ''] = match;
    const why = [...labelKeyErrors(key), ...labelValueErrors(value)];
    if (why.length > 0) throw new Error(`labelSelector: "${part}": ${why.join('; ')}`);
    labels[key] = value;
  }
  return labels;
}

/** A field selector on a job's phase (`status.phase=Dead`), the one field selector served. */
export function parsePhaseSelector(text: string, phases: readonly string[]): string | undefined {
  let phase: string | undefined;
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')) {
    const match = /^status\.phase\s*==?\s*(\w+)$/.exec(part);
    if (!match) throw new Error(`fieldSelector: "${part}" is not supported (only status.phase=<phase>)`);
    if (!phases.includes(match[1]!))
      throw new Error(`fieldSelector: "${match[1]}" is not a phase (one of ${phases.join(', ')})`);
    phase = match[1];
  }
  return phase;
}
