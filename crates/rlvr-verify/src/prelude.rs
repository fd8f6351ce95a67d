//! Python source placed before functional tests. Klear prefixes every functional program with
//! an import block (numpy and pandas included) and LeetCode helper definitions; these are our
//! own equivalents, written from that description: the same names end up bound, so solutions
//! that rely on them (`List`, `deque`, `ListNode`, `np`, `time()`…) behave as under Klear.

/// Standard-library imports that bind the names Klear's import block binds. Note that `time`
/// is the function `time.time`, `log` is `math.log` and `re_search` is `re.search`, as there.
pub const STANDARD_IMPORTS: &str = "\
import bisect, collections, copy, datetime, functools, heapq, io, itertools, math
import operator, os, random, re, string, sys
from bisect import bisect, bisect_left, bisect_right, insort
from collections import Counter, OrderedDict, defaultdict, deque
from copy import deepcopy
from functools import cache, cmp_to_key, lru_cache, partial, reduce
from heapq import heapify, heappop, heappush, heapreplace, merge, nlargest, nsmallest
from itertools import (accumulate, chain, combinations, count, cycle, groupby, islice,
                       pairwise, permutations, product, repeat, zip_longest)
from math import (atan2, ceil, comb, factorial, floor, gcd, inf, isqrt, log, log2, log10,
                  pi, prod, sqrt)
from operator import iand, itemgetter, or_, sub, xor
from os.path import commonprefix
from random import randrange, shuffle
from re import search as re_search
from string import ascii_lowercase, ascii_uppercase
from time import time
from typing import (Any, Callable, Deque, Dict, Generator, Iterable, Iterator, List,
                    Optional, Set, Tuple, Union)
";

/// The third-party imports of Klear's block; the interpreter must have numpy and pandas.
pub const SCIENTIFIC_IMPORTS: &str = "\
import numpy as np
import pandas as pd
";

/// Linked-list and binary-tree helpers for LeetCode-style asserts: `ListNode`, `TreeNode`,
/// `list_node(values)`, `tree_node(level_order_values_with_None_holes)`, `is_same_list`,
/// `is_same_tree`.
pub const LEETCODE_HELPERS: &str = "\
class ListNode:
    def __init__(self, val=0, next=None):
        self.val = val
        self.next = next


class TreeNode:
    def __init__(self, val=0, left=None, right=None):
        self.val = val
        self.left = left
        self.right = right


def list_node(values):
    head = None
    for value in reversed(list(values)):
        head = ListNode(value, head)
    return head


def is_same_list(first, second):
    while first is not None and second is not None:
        if first.val != second.val:
            return False
        first, second = first.next, second.next
    return first is None and second is None


def tree_node(values):
    values = list(values)
    if not values:
        return None
    root = TreeNode(values[0])
    pending = collections.deque([root])
    position = 1
    while pending and position < len(values):
        parent = pending.popleft()
        for side in ('left', 'right'):
            if position >= len(values):
                break
            if values[position] is not None:
                child = TreeNode(values[position])
                setattr(parent, side, child)
                pending.append(child)
            position += 1
    return root


def is_same_tree(first, second):
    if first is None or second is None:
        return first is second
    return (first.val == second.val and is_same_tree(first.left, second.left)
            and is_same_tree(first.right, second.right))
";

/// Klear's functional prefix: imports (numpy and pandas included), a blank line, helpers.
pub fn klear_prefix() -> String {
    format!("{STANDARD_IMPORTS}{SCIENTIFIC_IMPORTS}\n\n{LEETCODE_HELPERS}")
}

/// The judge's functional prefix: the same names without numpy and pandas (a solution that
/// needs them imports them itself), so a functional test does not pay their import time.
pub fn judge_prefix() -> String {
    format!("{STANDARD_IMPORTS}\n\n{LEETCODE_HELPERS}")
}
