import type { LiveSettings } from '../service/worker-service.ts';
import type { SaveResult } from './ipc-contract.ts';
import {
  editedSettings,
  needsRestart,
  settingsProblems,
  type Settings,
  type SettingsEdit,
} from './settings.ts';

export interface SaveSteps {
  /** The running service, if any: takes the key, origins and port live. */
  service: { applySettings(settings: LiveSettings): Promise<void> } | undefined;
  persist(settings: Settings): void;
  restart(settings: Settings): Promise<void>;
}

/**
 * Saving settings from the window: all or nothing. Invalid settings are explained and nothing
 * changes. Settings the service takes live are applied first (a port in use fails here, and
 * the service stays where it was, the settings unsaved); then they are stored; other changes
 * restart the service core. The window's edit keeps, replaces or clears the card master key.
 */
export async function saveSettings(
  current: Settings,
  edit: SettingsEdit,
  steps: SaveSteps,
): Promise<SaveResult> {
  const next = editedSettings(current, edit);
  const problems = settingsProblems(next);
  if (problems.length > 0) return { ok: false, problems };
  const restart = needsRestart(current, next) || !steps.service;
  if (!restart) {
    try {
      await steps.service?.applySettings({
        apiKey: next.apiKey,
        allowedOrigins: next.allowedOrigins,
        port: next.port,
      });
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      const message =
        code === 'PortInUse'
          ? `Port ${next.port} is in use by another program; the service stays on port ${current.port}.`
          : (error as Error).message;
      return { ok: false, problems: [{ field: 'port', message }] };
    }
  }
  steps.persist(next);
  if (restart) await steps.restart(next);
  return { ok: true, restarted: restart };
}
