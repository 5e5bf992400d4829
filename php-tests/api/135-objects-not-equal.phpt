--TEST--
== between two RedisLock objects is identity: distinct locks (even on the same key) are never equal, so in_array()/array_search() find the right one; <, > are false
--EXTENSIONS--
redislock
--FILE--
<?php
$url = 'redis://127.0.0.1:1';
$a = new RedisLock('same', 5, $url);
$b = new RedisLock('same', 5, $url);
$c = new RedisLock('other', 5, $url);
$a2 = $a;

echo "same object:      ", json_encode([$a == $a2, $a != $a2, $a <=> $a2, $a <= $a2, $a >= $a2]), "\n";
echo "same key:         ", json_encode([$a == $b, $a != $b, $a < $b, $a > $b, $a <= $b, $a >= $b, $a <=> $b, $b <=> $a]), "\n";
echo "other key:        ", json_encode([$a == $c, $a != $c, $a < $c, $a > $c]), "\n";
$locks = [$a, $b, $c];
echo "array_search:     ", json_encode([array_search($a, $locks), array_search($b, $locks), array_search($c, $locks)]), "\n";
echo "in_array:         ", json_encode([in_array($b, [$a]), in_array($b, [$a, $c]), in_array($b, [$c, $b])]), "\n";
echo "array_unique:     ", count(array_unique($locks, SORT_REGULAR)), "\n";
// Against other values PHP's usual object rules still apply.
echo "other values:     ", json_encode([$a == new stdClass(), $a == true, $a == null, $a == false]), "\n";
// Identity comparison, as always.
echo "===:              ", json_encode([$a === $a2, $a === $b, in_array($b, [$a], true)]), "\n";
?>
--EXPECT--
same object:      [true,false,0,true,true]
same key:         [false,true,false,false,false,false,1,1]
other key:        [false,true,false,false]
array_search:     [0,1,2]
in_array:         [false,false,true]
array_unique:     3
other values:     [false,true,false,false]
===:              [true,false,false]
