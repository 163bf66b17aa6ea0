// The compat modules fit the frameworks' own types (the pinned packages),
// though the SDK imports neither: `tsc -p tests/types` (run by the suite)
// fails when one stops fitting.

import { computerTool, type Computer } from "@openai/agents";
import type Anthropic from "@anthropic-ai/sdk";
import { AnthropicComputer, HolmComputer, type AnthropicComputerTool, type AnthropicToolResult } from "@holm/sdk";

export function agentsTool(computer: HolmComputer) {
  const asComputer: Computer = computer;
  return computerTool({ computer: asComputer });
}

export async function anthropicTurn(
  computer: AnthropicComputer,
  use: Anthropic.Beta.BetaToolUseBlock,
): Promise<[Anthropic.Beta.BetaToolUnion, Anthropic.Beta.BetaToolResultBlockParam]> {
  const tool: AnthropicComputerTool = await computer.tool();
  const result: AnthropicToolResult = await computer.toolResult(use);
  return [tool, result];
}
