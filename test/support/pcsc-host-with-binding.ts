// main/pcsc-host.ts with '@pokusew/pcsclite' resolved to the module named by FAKE_PCSC_BINDING
// (test/support/fake-pcsc-binding.cts), so the host's own code is supervised in the tests
// while the "binding" hangs or dies on demand. The host itself has no such hook.
import Module from 'node:module';

const fake = process.env.FAKE_PCSC_BINDING;
if (!fake) throw new Error('FAKE_PCSC_BINDING is not set');
const resolver = Module as unknown as {
  _resolveFilename(request: string, ...rest: unknown[]): string;
};
const resolve = resolver._resolveFilename;
resolver._resolveFilename = function (request: string, ...rest: unknown[]) {
  return request === '@pokusew/pcsclite' ? fake : resolve.call(this, request, ...rest);
};
await import('../../main/pcsc-host.ts');
