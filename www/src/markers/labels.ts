// Map labels that never overlap. Markers are labelled in their order (spawn first, then the
// players); a label whose box would overlap a label already placed is not drawn, and the placed
// label it overlaps first counts it, so a cluster shows its size ("player (local) +3"). Boxes
// are canvas pixels; the caller sizes each with room for the count (`label +99`), so a placed
// label that gains one still overlaps no other.

export interface LabelBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

function overlaps(a: LabelBox, b: LabelBox): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

/** For each box, the index of the placed label it joins: its own index when it is placed. */
export function placeLabels(boxes: readonly LabelBox[]): number[] {
  const placed: number[] = [];
  return boxes.map((box, i) => {
    const under = placed.find((p) => overlaps(boxes[p]!, box));
    if (under !== undefined) return under;
    placed.push(i);
    return i;
  });
}

/** The text of each placed label (its own, plus ` +N` for the N labels that joined it), or
 * null for a label that joined another. */
export function labelTexts(labels: readonly string[], joined: readonly number[]): Array<string | null> {
  const counts = new Map<number, number>();
  joined.forEach((p, i) => {
    if (p !== i) counts.set(p, (counts.get(p) ?? 0) + 1);
  });
  return labels.map((label, i) => {
    if (joined[i] !== i) return null;
    const n = counts.get(i) ?? 0;
    return n === 0 ? label : `${label} +${n}`;
  });
}
