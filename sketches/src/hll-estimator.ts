/**
 * Ertl's improved raw estimator ("New cardinality estimation algorithms for HyperLogLog
 * sketches", 2017, Algorithm 6): no bias correction tables, no small-range switch, accurate from 0
 * to the hash limit. `histogram[k]` = number of registers holding k, for k = 0 … q+1.
 */
export function ertlEstimate(histogram: ArrayLike<number>, m: number, q: number): number {
  let z = m * tau(1 - (histogram[q + 1] as number) / m);
  for (let k = q; k >= 1; k--) z = 0.5 * (z + (histogram[k] as number));
  z += m * sigma((histogram[0] as number) / m);
  return (m * m) / (2 * Math.LN2 * z);
}

function sigma(x: number): number {
  if (x === 1) return Infinity;
  let y = 1;
  let z = x;
  for (;;) {
    x *= x;
    const prev = z;
    z += x * y;
    y += y;
    if (z === prev) return z;
  }
}

function tau(x: number): number {
  if (x === 0 || x === 1) return 0;
  let y = 1;
  let z = 1 - x;
  for (;;) {
    x = Math.sqrt(x);
    const prev = z;
    y *= 0.5;
    z -= (1 - x) * (1 - x) * y;
    if (z === prev) return z / 3;
  }
}
