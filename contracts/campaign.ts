// Registering a campaign and preparing its task: the inputs and the ids the loops carry.

export interface RegisterCampaignInput {
  campaignId: string;
  /** A spec to store; omitted means the campaign must already exist. */
  spec?: unknown;
}

export interface PrepareTaskInput {
  campaignId: string;
  /** Use this dataset version instead of the base one (it must exist). */
  datasetVersionId?: string;
}

export interface PreparedTask {
  datasetVersionId: string;
  suiteId: string;
}
