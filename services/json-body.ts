// A JSON API's reply read once: its text, and the object it parses to ({} when it is not JSON, e.g. a proxy's error
// page), so a caller can report either with the status. Shared by the HTTP clients of services/ (MLflow's REST API,
// the feedback API simulate-users posts to).

export async function jsonBody(res: Response): Promise<{ text: string; parsed: Record<string, unknown> }> {
  const text = await res.text();
  try {
    const parsed: unknown = JSON.parse(text);
    return { text, parsed: parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {} };
  } catch {
    return { text, parsed: {} };
  }
}
