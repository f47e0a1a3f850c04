/**
 * Keeps `String.prototype`'s methods quick to look up once a library has subclassed `String`
 * (ioredis declares `class VerbatimString extends String` as it loads): one store through an object
 * that inherits from it, after which V8 holds the prototype's properties in fast mode again. Plain
 * JavaScript that changes no string method's behaviour; why and what it saves are measured in
 * docs/benchmarks.md (the tracing part: OpenTelemetry's OTLP serializer reads strings a character
 * at a time).
 */
export function keepStringMethodsFast(): void {
  const heir = Object.create(String.prototype) as { probe?: number };
  heir.probe = 1;
}
