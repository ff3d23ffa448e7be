import type { RunProgram } from '../service/card/pcscd-probe.ts';

/**
 * What runs elevated: SCardSvr set to start automatically, then started. As a script of its own
 * (passed encoded), so no quoting can change it.
 */
export const ELEVATED_SCRIPT = [
  'try { Set-Service -Name SCardSvr -StartupType Automatic -ErrorAction Stop } catch { exit 1 }',
  // Started now too; "already running" is not a failure.
  'Start-Service -Name SCardSvr -ErrorAction SilentlyContinue',
  'exit 0',
].join('; ');

/** The exit code when the operator answers the administrator prompt "No" (ERROR_CANCELLED). */
export const DECLINED_EXIT_CODE = 1223;

/**
 * The command that asks Windows for elevation (UAC) and runs ELEVATED_SCRIPT with it. A "No"
 * makes Start-Process fail with a non-terminating error and return nothing: without
 * ErrorAction Stop the script went on to `exit $p.ExitCode` with $p null, which exits 0, and a
 * declined prompt was reported as done. Now it exits 1223, and so does a missing process.
 */
export function elevatedFixCommand(): { file: string; args: string[] } {
  const encoded = Buffer.from(ELEVATED_SCRIPT, 'utf16le').toString('base64');
  const outer = [
    "$ErrorActionPreference = 'Stop';",
    'try { $p = Start-Process -FilePath powershell.exe -Verb RunAs -WindowStyle Hidden -Wait -PassThru',
    `-ArgumentList '-NoProfile','-NonInteractive','-EncodedCommand','${encoded}' }`,
    `catch { exit ${DECLINED_EXIT_CODE} };`,
    `if ($null -eq $p) { exit ${DECLINED_EXIT_CODE} };`,
    'exit $p.ExitCode',
  ].join(' ');
  return { file: 'powershell.exe', args: ['-NoProfile', '-NonInteractive', '-Command', outer] };
}

export interface FixResult {
  ok: boolean;
  message: string;
}

/**
 * The one-click fix for a Smart Card service that is on demand, stopped or disabled: set it to
 * start automatically and start it. Windows asks for an administrator (UAC) then, and only then:
 * never at start-up or while looking for the reader (patches/README.md). What the reader does
 * next is shown by the probe, which the caller runs again at once.
 */
export async function fixSmartCardService(
  platform: NodeJS.Platform,
  run: RunProgram,
): Promise<FixResult> {
  if (platform !== 'win32')
    return { ok: false, message: 'Only Windows has a smart-card service setting to change.' };
  const { file, args } = elevatedFixCommand();
  try {
    await run(file, args);
    return {
      ok: true,
      message: 'The smart-card service now starts automatically; the reader is being looked for.',
    };
  } catch (error) {
    return {
      ok: false,
      message: `Nothing was changed: the administrator prompt was declined or the change failed (${(error as Error).message.split('\n')[0]}).`,
    };
  }
}
