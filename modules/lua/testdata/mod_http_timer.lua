-- module:add_timer: a repeating timer and one stopped before it fires.
module:depends("http")
local ticks, late = 0, 0
module:add_timer(0.05, function(now, step)
	ticks = ticks + step
	if ticks < 3 then return 0.05 end
end, 1)
local t = module:add_timer(0.05, function() late = late + 1 end)
t:stop()
module:provides("http", { route = { GET = function() return ticks .. " " .. late end } })
