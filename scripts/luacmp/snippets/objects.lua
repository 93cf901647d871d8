-- Method calls on objects with metatables, closures.
local Counter = {}
Counter.__index = Counter
function Counter.new() return setmetatable({ n = 0 }, Counter) end
function Counter:add(k) self.n = self.n + k; return self end
local c = Counter.new()
local function adder(k) return function(o) return o:add(k) end end
local add3 = adder(3)
for i = 1, 3000000 do add3(c); c:add(1) end
print(string.format("%d", c.n))
