import type { Locator, Page } from "playwright-core";
import type { Logger } from "../../shared/log/logger.ts";
import { CLICK_TIMEOUT_MS, clickFirst, firstVisible, switchState, waitUntil } from "./page-actions.ts";
import { ACTION_SELECTORS } from "./signals.ts";

/** Fills the display name; true when the field holds it afterwards (or there is no field). */
export async function fillDisplayName(page: Page, name: string, logger: Logger): Promise<boolean> {
  const hit = await firstVisible(page, ACTION_SELECTORS.nameInput);
  if (!hit) {
    logger.warn("teams: no display-name field on the pre-join screen");
    return false;
  }
  try {
    await hit.locator.fill(name, { timeout: CLICK_TIMEOUT_MS });
    const ok = (await hit.locator.inputValue({ timeout: 1000 })) === name;
    logger.info({ signal: hit.selector, ok }, "teams: display name filled");
    if (ok) return true;
  } catch (err) {
    logger.warn({ err, signal: hit.selector }, "teams: could not fill the display name; typing it");
  }
  return typeName(page, hit.locator, name, logger);
}

/**
 * 2026 facts: a shroud lies over the light pre-join form, so pointer clicks on the name field
 * fail; the field is focused from script and the name typed through the keyboard.
 */
async function typeName(page: Page, field: Locator, name: string, logger: Logger): Promise<boolean> {
  try {
    await field.focus({ timeout: CLICK_TIMEOUT_MS });
    await page.keyboard.press("Control+A");
    await page.keyboard.press("Backspace");
    await page.keyboard.type(name, { delay: 10 });
    const ok = (await field.inputValue({ timeout: 1000 })) === name;
    logger.info({ ok, signal: "keyboard" }, "teams: display name typed");
    return ok;
  } catch (err) {
    logger.warn({ err }, "teams: could not type the display name");
    return false;
  }
}

/**
 * Turns the pre-join camera or mic switch off and checks it stayed off. Teams starts both on
 * when it has devices; the bot must join with both off (recorder-bot.md).
 */
export async function turnOff(page: Page, device: "camera" | "mic", logger: Logger): Promise<boolean> {
  const hit = await firstVisible(page, ACTION_SELECTORS[device]);
  if (!hit) {
    // No switch at all: Teams found no such device, so it cannot be on.
    logger.info({ device }, "teams: no pre-join switch, device absent");
    return true;
  }
  const byLabel = hit.selector.includes("aria-label");
  const isOn = async () => (byLabel ? hit.locator.isVisible() : (await switchState(hit.locator)) === true);
  if (!(await isOn())) {
    logger.info({ device, signal: hit.selector }, "teams: pre-join switch already off");
    return true;
  }
  // clickFirst: through the keyboard when a shroud swallows the pointer (2026 facts).
  if (!(await clickFirst(page, [hit.selector]))) {
    logger.warn({ device, signal: hit.selector }, "teams: could not click the pre-join switch");
    return false;
  }
  const off = await waitUntil(async () => !(await isOn()), 2000);
  if (off) logger.info({ device, signal: hit.selector }, "teams: pre-join switch turned off");
  else logger.warn({ device, signal: hit.selector }, "teams: pre-join switch did not turn off");
  return off;
}
