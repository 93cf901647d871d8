-- Tables: many small records, then sorting an array.
local recs = {}
for i = 1, 200000 do recs[i] = { id = i, name = "n" .. i, score = (i * 7919) % 10007 } end
local keys = {}
local x = 12345
for i = 1, 200000 do x = (x * 16807) % 2147483647; keys[i] = x end -- exact in floats too
table.sort(keys)
table.sort(recs, function(a, b) return a.score < b.score or (a.score == b.score and a.id < b.id) end)
print(string.format("%d %d %d", keys[1], keys[200000], recs[1].id))
