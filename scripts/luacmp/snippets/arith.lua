-- Number crunching in a loop (floats in 5.1, integers in 5.4).
local s = 0
for i = 1, 10000000 do s = (s + i * i) % 1000003 end
print(string.format("%d", s))
