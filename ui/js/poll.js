// poll.js — the live refresh of a view: load, then again period() after it
// finished (2 s, or 10 s while the event stream stands in: main.js,
// events.js); never while the tab is hidden; never two loads at once (a
// load's own requests run one after the other). Leaving the view aborts
// the load in flight, so a late answer never paints over the next view.
export const FAST_MS = 2000;
export const SLOW_MS = 10000;

export class Poller {
  constructor(load, onError, period = () => FAST_MS) {
    this.load = load;           // async (signal) => void
    this.onError = onError;     // (error) => void
    this.period = period;       // () => ms until the next load
    this.timer = null;
    this.running = false;
    this.again = false;
    this.stopped = false;
    this.ctl = new AbortController();
    this.onVisibility = () => {
      if (document.hidden) {
        clearTimeout(this.timer);
        this.timer = null;
      } else {
        this.now();
      }
    };
    document.addEventListener('visibilitychange', this.onVisibility);
  }

  // Loads now (or right after the load in flight).
  now() {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.timer = null;
    this.run();
  }

  async run() {
    if (this.stopped || document.hidden) return;
    this.running = true;
    try {
      await this.load(this.ctl.signal);
      this.onError(null);
    } catch (e) {
      if (e.name !== 'AbortError') this.onError(e);
    } finally {
      this.running = false;
    }
    if (this.stopped) return;
    if (this.again) {
      this.again = false;
      this.run();
    } else if (!document.hidden) {
      this.timer = setTimeout(() => this.run(), this.period());
    }
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    this.ctl.abort();
    document.removeEventListener('visibilitychange', this.onVisibility);
  }
}
