// The map's label placement (www/src/markers/labels.ts): no two drawn labels overlap, and a
// label that would overlap one already placed joins it as a count.
import { describe, expect, test } from 'vitest';
import { labelTexts, placeLabels, type LabelBox } from '../../www/src/markers/labels.js';

const box = (x: number, y: number, width = 100, height = 14): LabelBox => ({ x, y, width, height });

describe('map labels', () => {
  test('four players at spawn: one label with the count of the three it hides', () => {
    const labels = ['spawn', 'player (local)', 'player', 'player', 'player'];
    const boxes = [box(500, 300), box(502, 305), box(498, 296), box(510, 310), box(900, 300)];
    const joined = placeLabels(boxes);
    expect(joined).toEqual([0, 0, 0, 0, 4]);
    expect(labelTexts(labels, joined)).toEqual(['spawn +3', null, null, null, 'player']);
  });

  test('a label joins the first placed label it overlaps; boxes that only touch are both drawn', () => {
    // 0 at x 0..100, 1 touches it (x 100..200), 2 overlaps 1 only, 3 overlaps 0 and 1.
    const joined = placeLabels([box(0, 0), box(100, 0), box(150, 5), box(90, 2)]);
    expect(joined).toEqual([0, 1, 1, 0]);
    expect(labelTexts(['a', 'b', 'c', 'd'], joined)).toEqual(['a +1', 'b +1', null, null]);
  });

  test('no two placed labels overlap, on 2,000 random boxes', () => {
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
    const boxes = Array.from({ length: 2000 }, () => box(rand() * 1200, rand() * 800, 40 + rand() * 80));
    const joined = placeLabels(boxes);
    const placed = joined.flatMap((p, i) => (p === i ? [boxes[i]!] : []));
    for (let i = 0; i < placed.length; i++)
      for (let j = i + 1; j < placed.length; j++) {
        const [a, b] = [placed[i]!, placed[j]!];
        expect(a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height).toBe(false);
      }
    // Every hidden label joined a placed one that it overlaps.
    joined.forEach((p, i) => {
      expect(joined[p]).toBe(p);
      if (p !== i) {
        const [a, b] = [boxes[p]!, boxes[i]!];
        expect(a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height).toBe(true);
      }
    });
    expect(placed.length).toBe(369);
  });
});
