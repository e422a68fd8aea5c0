// Links into the Temporal UI for a workflow or a schedule, when the stack has a UI.
/** What a link needs: the UI's address (absent: no links) and the namespace. */
export interface UiEndpoint {
  uiUrl?: string;
  namespace: string;
}

/** The Temporal UI page of a workflow, when the stack has a UI. */
export function uiLink(e: UiEndpoint, workflowId: string): string | undefined {
  return e.uiUrl ? `${e.uiUrl}/namespaces/${e.namespace}/workflows/${encodeURIComponent(workflowId)}` : undefined;
}

/** The Temporal UI page of a schedule, when the stack has a UI. */
export function scheduleUiLink(e: UiEndpoint, scheduleId: string): string | undefined {
  return e.uiUrl ? `${e.uiUrl}/namespaces/${e.namespace}/schedules/${encodeURIComponent(scheduleId)}` : undefined;
}
