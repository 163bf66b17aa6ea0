// @holm/sdk: boxes (Linux desktops for AI agents) through holmd's REST API.
//
//   import { Holm } from "@holm/sdk";
//   const holm = new Holm();
//   const box = await holm.create({ browser: false });
//   await box.type("hello");
//   const shot = await box.screenshot();
//
// The server's address and token come from HOLM_SERVER_URL and
// HOLM_SERVER_TOKEN unless given. Errors are `HolmError`s in the API's one
// shape, one class per code.

export { Holm, DEFAULT_WAIT_SECS, type CreateOptions } from "./client.js";
export { Box, checkRunning, type CommandOptions, type InputOptions, type PointLike } from "./box.js";
export { BoxTools, type CdpConnector } from "./box-tools.js";
export { Terminal } from "./terminal.js";
export {
  Config,
  DEFAULT_SERVER_URL,
  DEFAULT_TIMEOUT_MS,
  ENV_TOKEN,
  ENV_URL,
  Retry,
  Screenshot,
  parseRetryAfter,
  fromAnswer,
  type HolmOptions,
  type RetryOptions,
  type RegionLike,
  type ScreenshotOptions,
} from "./core.js";
export { PngImage, decodePng } from "./png.js";
export { Transport, type Send } from "./transport.js";
export * from "./errors.js";
export { HolmComputer, AGENT_BUTTONS, AGENT_WAIT_SETTLE, wheelClicks, pyRound } from "./openai-agents.js";
export {
  AnthropicComputer,
  ANTHROPIC_BETA,
  ANTHROPIC_MAX_LONG_EDGE,
  ANTHROPIC_MAX_PIXELS,
  ANTHROPIC_SETTLE,
  ANTHROPIC_TOOL_TYPE,
  ToolError,
  imageSize,
  scaleFor,
  type AnthropicComputerTool,
  type AnthropicResultBlock,
  type AnthropicToolResult,
} from "./anthropic.js";
export * as actions from "./actions.js";
export * as routes from "./routes.js";
export * as types from "./types.js";
export type * from "./types.js";

/** The package's version. */
export const VERSION = "0.1.0";
