-- wrk script: POST a 20-token resolve (15 that exist, 5 that do not).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local slugs = {
  "framework:theory-of-constraints", "framework:drum-buffer-rope", "framework:critical-chain",
  "framework:kanban-method", "framework:okrs", "framework:jobs-to-be-done", "framework:net-promoter-score",
  "framework:value-based-pricing", "framework:five-whys", "framework:pdca",
  "paper:little-1961-queuing-formula", "paper:kingman-1961-heavy-traffic", "paper:harris-1913-eoq",
  "blog:graham-2013-do-things-that-dont-scale", "blog:kelly-2008-1000-true-fans",
  "framework:missing-one", "paper:missing-two", "blog:missing-three", "framework:missing-four", "paper:missing-five",
}
local items = {}
for _, tok in ipairs(slugs) do
  local t, s = tok:match("([^:]+):(.+)")
  items[#items + 1] = string.format('{"type":"%s","slug":"%s"}', t, s)
end
wrk.body = '{"tokens":[' .. table.concat(items, ",") .. ']}'
