// The lines `logbook rehearse --ndjson` writes, as the editor reads them: a shared shape, so neither side imports the other.

export interface RehearsalPoint {
  /** Which driving process of the uncrashed run hit it (1 = `run`; later ones resume after an approval or a stop). */
  readonly process: number;
  /** The --crash-at spec, e.g. `payments.charge#1@after-execute`. */
  readonly spec: string;
  /** The fault point, e.g. `action:after-execute`. */
  readonly point: string;
  readonly target: string;
  readonly occurrence: number;
}

export interface RehearsalCampaign {
  readonly index: number;
  readonly point: RehearsalPoint;
  readonly status: string;
  readonly ms: number;
}

export type RehearsalEvent =
  | {
      readonly event: 'points';
      readonly script: string;
      readonly agent: string;
      readonly baseline: { readonly status: string };
      readonly available: readonly RehearsalPoint[];
      readonly selected: readonly RehearsalPoint[];
    }
  | {
      readonly event: 'result';
      readonly result: RehearsalCampaign;
      readonly broken: boolean;
      readonly messages: readonly string[];
      readonly reproduction: readonly string[];
    }
  | { readonly event: 'report'; readonly report: { readonly ok: boolean; readonly ms: number } }
  | { readonly event: 'baseline-failed'; readonly script: string; readonly agent: string; readonly status: string | null; readonly error: unknown };
