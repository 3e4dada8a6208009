// "N similar hidden": fetch the cluster's members from the JSON API and list them under the hit.
document.addEventListener("click", async (event) => {
  const button = event.target.closest("button.expand");
  if (!button) return;
  const list = button.nextElementSibling;
  if (!list.hidden) { list.hidden = true; return; }
  if (!list.dataset.loaded) {
    const index = document.body.dataset.index;
    const hitId = button.closest(".hit").dataset.id;
    const resp = await fetch(`/v1/indices/${encodeURIComponent(index)}/clusters/${encodeURIComponent(button.dataset.cluster)}?size=1000&text_chars=0`);
    const data = await resp.json();
    for (const m of data.members || []) {
      if (m.id === hitId) continue;
      const li = document.createElement("li");
      li.className = "similar-item";
      li.dataset.id = m.id;
      const distance = m.distance_to_canonical === null ? "–" : m.distance_to_canonical;
      li.textContent = `${m.title || m.id} (${m.id}) · ${distance} bits from the canonical`;
      list.appendChild(li);
    }
    list.dataset.loaded = "1";
  }
  list.hidden = false;
});
