// nfc-pcsc's Reader module alone: it wraps any @pokusew/pcsclite-shaped reader object and, unlike
// the package's index, does not load the native PC/SC binding. The simulator builds its readers
// with it, so nfc-pcsc's own APDU code runs over simulated cards.
declare module 'nfc-pcsc/dist/Reader.js' {
  import type { Logger, Reader } from 'nfc-pcsc';

  const readerModule: { default: new (reader: object, logger?: Logger) => Reader };
  export default readerModule;
}
