// Flywheel's custom search attributes: registered on the dev server by `flywheel up`, upserted by the loops
// so runs can be filtered in the Temporal UI (`CampaignId = "demo" AND LoopKind = "inner"`).
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const CampaignId = defineSearchAttributeKey('CampaignId', SearchAttributeType.KEYWORD);
export const LoopKind = defineSearchAttributeKey('LoopKind', SearchAttributeType.KEYWORD);
export const Iteration = defineSearchAttributeKey('Iteration', SearchAttributeType.INT);
export const BestScore = defineSearchAttributeKey('BestScore', SearchAttributeType.DOUBLE);

export const ALL_SEARCH_ATTRIBUTES = [CampaignId, LoopKind, Iteration, BestScore];
