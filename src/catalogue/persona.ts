/**
 * The gateway's own part of an endpoint's instructions: the persona (config `persona`, or the
 * client's own, init option `agentPersona`) labelled `## Persona` at the head, then the config's
 * `instructions`. The upstreams' labelled sections follow (merge.ts, `mergeInstructions`). The
 * label keeps a persona apart from what an operator or an upstream wrote.
 */
export function gatewayText(persona: string | undefined, instructions: string | undefined): string | undefined {
  const sections: string[] = [];
  if (persona !== undefined && persona.trim() !== '') sections.push(`## Persona\n${persona.trim()}`);
  if (instructions !== undefined && instructions.trim() !== '') sections.push(instructions.trim());
  return sections.length === 0 ? undefined : sections.join('\n\n');
}
