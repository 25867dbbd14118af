-- One scenario's requests (the constants above are written by bench/__main__.py's script()):
-- each carries the next agent's token in turn, or, for OWNED ids, the token of the agent the
-- id belongs to; {agent} is that agent, {to} an agent drawn at random, {n} the next fresh id.
local n = START - 1
local turn = 0
math.randomseed(7)

local function fill(text, agent)
  text = string.gsub(text, "{agent}", agent)
  text = string.gsub(text, "{n}", tostring(n))
  return (string.gsub(text, "{to}", function()
    return "agent-" .. math.random(0, AGENTS - 1)
  end))
end

request = function()
  n = n + 1
  local i
  if OWNED then
    i = (n - FIRST) % #TOKENS + 1
  else
    turn = turn % #TOKENS + 1
    i = turn
  end
  local headers = { ["Authorization"] = TOKENS[i] }
  local body = nil
  if BODY then
    body = fill(BODY, NAMES[i])
    headers["Content-Type"] = "application/json"
  end
  return wrk.format(METHOD, fill(PATH, NAMES[i]), headers, body)
end
