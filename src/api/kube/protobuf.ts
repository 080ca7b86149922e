// Just enough of Kubernetes' protobuf encoding to read the review kubectl sends: `kubectl auth
// can-i` posts its SelfSubjectAccessReview (and --list its SelfSubjectRulesReview) as
// application/vnd.kubernetes.protobuf, whatever the server's discovery says. The envelope is the
// magic "k8s\0" and a runtime.Unknown whose field 2 holds the object; the object's fields are
// read by number (k8s.io/api/authorization/v1/generated.proto). Answers go back as JSON, which
// client-go accepts.

export const PROTOBUF_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf';
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

type Fields = Map<number, Buffer[]>;

/** The length-delimited fields of one message, by number (varints and fixed-size fields are skipped). */
function fieldsOf(message: Buffer): Fields {
  const fields: Fields = new Map();
  let at = 0;
  const varint = (): number => {
    let value = 0;
    let shift = 0;
    for (;;) {
      if (at >= message.length) throw new Error('a protobuf varint runs past the end');
      const byte = message[at++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return value;
      shift += 7;
    }
  };
  while (at < message.length) {
    const key = varint();
    const number = Math.floor(key / 8);
    const wire = key % 8;
    if (wire === 0) varint();
    else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else if (wire === 2) {
      const length = varint();
      if (at + length > message.length) throw new Error('a protobuf field runs past the end');
      fields.set(number, [...(fields.get(number) ?? []), message.subarray(at, at + length)]);
      at += length;
    } else throw new Error(`protobuf wire type ${wire} is not read here`);
  }
  return fields;
}

function text(fields: Fields, number: number): string | undefined {
  const value = fields.get(number)?.[0];
  return value === undefined ? undefined : value.toString('utf8');
}

function message(fields: Fields, number: number): Fields | undefined {
  const value = fields.get(number)?.[0];
  return value === undefined ? undefined : fieldsOf(value);
}

/** The object inside a Kubernetes protobuf envelope, as its fields. */
function objectOf(body: Buffer): Fields {
  if (!body.subarray(0, 4).equals(MAGIC)) throw new Error('not a Kubernetes protobuf body (no k8s magic)');
  const raw = fieldsOf(body.subarray(4)).get(2)?.[0];
  if (raw === undefined) throw new Error('a Kubernetes protobuf body without its object');
  return fieldsOf(raw);
}

const defined = <T extends object>(object: T): T =>
  Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined)) as T;

/** A SelfSubjectAccessReview's spec (field 2): resourceAttributes (1) or nonResourceAttributes (2). */
export function accessReviewSpecOf(body: Buffer): Record<string, unknown> {
  const spec = message(objectOf(body), 2) ?? new Map();
  const resource = message(spec, 1);
  const nonResource = message(spec, 2);
  return defined({
    resourceAttributes: resource
      ? defined({
          namespace: text(resource, 1),
          verb: text(resource, 2),
          group: text(resource, 3),
          version: text(resource, 4),
          resource: text(resource, 5),
          subresource: text(resource, 6),
          name: text(resource, 7),
        })
      : undefined,
    nonResourceAttributes: nonResource
      ? defined({ path: text(nonResource, 1), verb: text(nonResource, 2) })
      : undefined,
  });
}

/** A SelfSubjectRulesReview's spec (field 2): its namespace (1). */
export function rulesReviewSpecOf(body: Buffer): Record<string, unknown> {
  const spec = message(objectOf(body), 2) ?? new Map();
  return defined({ namespace: text(spec, 1) });
}
