import type { ChannelWire } from './channels.server.ts';

/** A row of the channel table: a channel, or in tag mode a tag row with its channels. */
export type ChannelEntry =
  | { kind: 'channel'; channel: ChannelWire }
  | { kind: 'tag'; tag: string; children: ChannelWire[] };

/**
 * Groups a flat channel list (GET /api/channel/ items) into table rows, as new-api's channel table does: in
 * tag mode the channels sharing a non-empty tag form one tag row (the list keeps them together); otherwise,
 * and for untagged channels, one row per channel.
 */
export function groupChannelEntries(items: readonly ChannelWire[], tagMode: boolean): ChannelEntry[] {
  const entries: ChannelEntry[] = [];
  const byTag = new Map<string, ChannelWire[]>();
  for (const channel of items) {
    if (!tagMode || !channel.tag) {
      entries.push({ kind: 'channel', channel });
      continue;
    }
    const children = byTag.get(channel.tag);
    if (children) children.push(channel);
    else {
      const group: ChannelWire[] = [channel];
      byTag.set(channel.tag, group);
      entries.push({ kind: 'tag', tag: channel.tag, children: group });
    }
  }
  return entries;
}
