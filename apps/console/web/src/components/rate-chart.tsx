import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/** One sample of the live chart: seconds since the epoch and the two rates. */
export interface RateSample {
  readonly atSeconds: number;
  readonly inPerSecond: number;
  readonly outPerSecond: number;
}

const OPTIONS: Omit<uPlot.Options, 'width'> = {
  height: 220,
  series: [
    {},
    { label: 'in (msg/s)', stroke: '#2563eb', width: 2 },
    { label: 'out (msg/s)', stroke: '#16a34a', width: 2 },
  ],
  axes: [{}, { label: 'msg/s' }],
  scales: { y: { range: (_plot, min, max) => [0, Math.max(10, max * 1.1, min)] } },
};

function columns(samples: readonly RateSample[]): uPlot.AlignedData {
  return [
    samples.map((sample) => sample.atSeconds),
    samples.map((sample) => sample.inPerSecond),
    samples.map((sample) => sample.outPerSecond),
  ];
}

/** Message rates in and out over the last samples, drawn by uPlot. */
export function RateChart({ samples }: { samples: readonly RateSample[] }) {
  const holder = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot>(undefined);

  useEffect(() => {
    const element = holder.current;
    if (element === null) return undefined;
    const created = new uPlot({ ...OPTIONS, width: element.clientWidth || 600 }, columns([]), element);
    plot.current = created;
    const resize = new ResizeObserver(() => created.setSize({ width: element.clientWidth, height: 220 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      created.destroy();
      plot.current = undefined;
    };
  }, []);

  useEffect(() => {
    plot.current?.setData(columns(samples));
  }, [samples]);

  return <div ref={holder} className="chart" data-testid="rate-chart" data-samples={samples.length} />;
}
