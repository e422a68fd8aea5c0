// Campaign versions and preparing a campaign's task: the inputs and the ids the loops carry. A loop carries the id
// of the immutable campaign version it runs (`<name>@<hash>`), never the spec itself.

/** The campaign (spec name) of a version id `<name>@<hash>`. */
export const campaignIdOfVersion = (campaignVersionId: string): string => {
  const at = campaignVersionId.lastIndexOf('@');
  return at < 0 ? campaignVersionId : campaignVersionId.slice(0, at);
};

export interface LoopSettingsInput {
  campaignVersionId: string;
}

export interface PrepareTaskInput {
  campaignVersionId: string;
  /** Use this dataset version instead of the base one (it must exist). */
  datasetVersionId?: string;
}

export interface PreparedTask {
  datasetVersionId: string;
  suiteId: string;
}
