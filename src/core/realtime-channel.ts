/**
 * Where a query's answer is published as it is written (docs/architecture/upstream.md#the-realtime-channel):
 * a Centrifugo-protocol endpoint, its connection token, the channel and its subscription token,
 * and the stream position to start from. The tokens are secrets: never logged, never a metric label.
 */
export interface RealtimeChannel {
  wsUrl: string;
  token: string;
  channel: string;
  subscriptionToken: string;
  since: { offset: number; epoch: string };
}
