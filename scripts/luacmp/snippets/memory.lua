-- Memory held: one million short strings in a table.
local t = {}
for i = 1, 1000000 do t[i] = "key" .. i end
print(#t, t[1000000])
