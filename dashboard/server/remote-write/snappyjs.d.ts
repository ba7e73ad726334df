/** Types of snappyjs 0.7 (block format; docs/decisions/0039-remote-write.md). */
declare module "snappyjs" {
  function compress<T extends Uint8Array | ArrayBuffer>(input: T): T;
  function uncompress<T extends Uint8Array | ArrayBuffer>(input: T, maxLength?: number): T;
  const snappy: { compress: typeof compress; uncompress: typeof uncompress };
  export default snappy;
  export { compress, uncompress };
}
