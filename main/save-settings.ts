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
  /** Stores the settings; throws when it cannot (disk full, keyring denied). */
  persist(settings: Settings): void;
  restart(settings: Settings): Promise<void>;
}

const live = ({ apiKey, allowedOrigins, port }: Settings): LiveSettings => ({
  apiKey,
  allowedOrigins,
  port,
});

/**
 * Saving settings from the window: all or nothing. Invalid settings are explained and nothing
 * changes. Settings the service takes live are applied first (a port in use fails here, and
 * the service stays where it was, the settings unsaved); then they are stored (when that fails,
 * the live ones are put back, so what runs is what a restart would load); other changes
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
      await steps.service?.applySettings(live(next));
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      const message =
        code === 'PortInUse'
          ? `Port ${next.port} is in use by another program; the service stays on port ${current.port}.`
          : (error as Error).message;
      return { ok: false, problems: [{ field: 'port', message }] };
    }
  }
  try {
    steps.persist(next);
  } catch (error) {
    const reason = `The settings could not be saved: ${(error as Error).message.replace(/\.$/, '')}.`;
    let outcome = 'Nothing was changed.';
    try {
      if (!restart) await steps.service?.applySettings(live(current));
    } catch (rollback) {
      outcome = `The service runs with them until it restarts (putting the previous ones back failed: ${(rollback as Error).message}).`;
    }
    return { ok: false, problems: [{ field: null, message: `${reason} ${outcome}` }] };
  }
  if (restart) await steps.restart(next);
  return { ok: true, restarted: restart };
}
