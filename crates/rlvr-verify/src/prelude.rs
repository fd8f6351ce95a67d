//! Python source placed before functional tests. Klear and rllm prefix functional programs with
//! the same import block (numpy and pandas included) and LeetCode helper definitions:
//! [`REFERENCE_IMPORTS`] holds the same import statements in the same order (so the same names
//! end up bound, shadowing included: `bisect` is the module, `time` the function) and
//! [`REFERENCE_LEETCODE_HELPERS`] helpers with the same signatures. The judge uses its own,
//! stdlib-only block.

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

/// The import block Klear's and rllm's functional programs start with: their statements in
/// their order (later statements rebind names bound by earlier ones, which matters: `from
/// bisect import bisect` is followed by `import bisect`).
pub const REFERENCE_IMPORTS: &str = "\
from itertools import accumulate, chain, combinations, count, permutations, product, groupby, islice, repeat
from copy import deepcopy
from string import ascii_lowercase, ascii_uppercase
from math import floor, log2, log10, sqrt, comb, gcd, ceil, inf, isqrt, factorial, atan2, pi
from collections import defaultdict, deque, Counter
from bisect import bisect, bisect_left, bisect_right, insort
from heapq import heappush, heappop, heapify, merge, nlargest, nsmallest, heapreplace
from functools import reduce, cache, lru_cache, cmp_to_key, reduce
from random import randrange, shuffle
from operator import itemgetter, sub, xor, or_
from re import search as re_search
from os.path import commonprefix
from typing import List, Tuple, Dict, Set, Optional, Union, Any, Callable, Iterable, Iterator, Generator, Deque
import copy
import string
import math
import collections
import bisect
import heapq
import functools
import random
import itertools
import operator
import re
import datetime
from time import time
import numpy as np
import pandas as pd
from math import log, prod
from collections import deque, defaultdict, Counter, OrderedDict
from itertools import accumulate, permutations, combinations, product, groupby, islice, chain, repeat, zip_longest, cycle, pairwise
from functools import lru_cache, reduce, partial
from operator import iand
import sys
import io, os
";

/// The references' LeetCode helpers: same names, parameter names and annotations (evaluated at
/// definition time, so they need the import block's `typing` names).
pub const REFERENCE_LEETCODE_HELPERS: &str = "\
class ListNode:
    def __init__(self, val=0, next=None):
        self.val = val
        self.next = next

def is_same_list(l1: Optional[ListNode], l2: Optional[ListNode]) -> bool:
    while l1 and l2:
        if l1.val != l2.val:
            return False
        l1, l2 = l1.next, l2.next
    return l1 is None and l2 is None

def list_node(values: List[Any]) -> Optional[ListNode]:
    head = tail = ListNode(0)
    for value in values:
        tail.next = ListNode(value)
        tail = tail.next
    return head.next

class TreeNode:
    def __init__(self, val=0, left=None, right=None):
        self.val = val
        self.left = left
        self.right = right

def tree_node(values: List[Any]) -> Optional[TreeNode]:
    if not values:
        return None
    root = TreeNode(values[0])
    pending = deque([root])
    position = 1
    while pending and position < len(values):
        parent = pending.popleft()
        if values[position] is not None:
            parent.left = TreeNode(values[position])
            pending.append(parent.left)
        position += 1
        if position < len(values) and values[position] is not None:
            parent.right = TreeNode(values[position])
            pending.append(parent.right)
        position += 1
    return root

def is_same_tree(p: Optional[TreeNode], q: Optional[TreeNode]) -> bool:
    if not p and not q:
        return True
    if not p or not q:
        return False
    return p.val == q.val and is_same_tree(p.left, q.left) and is_same_tree(p.right, q.right)
";

/// Klear's functional prefix: `BASE_IMPORTS + "\n\n" + BASE_LEETCODE_IMPORTS` (the code and
/// the assert follow, each after `"\n\n"`).
pub fn klear_prefix() -> String {
    format!("{REFERENCE_IMPORTS}\n\n{REFERENCE_LEETCODE_HELPERS}")
}

/// rllm's functional prefix (its firejail runner): `BASE_IMPORTS + "\n" +
/// BASE_LEETCODE_IMPORTS + "\n"` before `code + "\n" + tests`.
pub fn rllm_prefix() -> String {
    format!("{REFERENCE_IMPORTS}\n{REFERENCE_LEETCODE_HELPERS}\n")
}

/// The judge's functional prefix: the same names without numpy and pandas (a solution that
/// needs them imports them itself), so a functional test does not pay their import time.
pub fn judge_prefix() -> String {
    format!("{STANDARD_IMPORTS}\n\n{LEETCODE_HELPERS}")
}

/// The modules an import block imports (`import a, b as c` and `from a.b import x` lines;
/// continuation lines of a parenthesized name list are skipped), each once, in order. A runner
/// imports them once before it forks any test of a program that starts with the block (issue
/// 22: 18 module loads per functional test saved): each test's program imports them again and
/// finds them in `sys.modules`. A forked child owns its copy of each module as a fresh process
/// would, and `random` reseeds itself in every forked child.
pub fn imported_modules(block: &'static str) -> Vec<&'static str> {
    let mut modules: Vec<&'static str> = Vec::new();
    for line in block.lines() {
        let named: Vec<&'static str> = if let Some(rest) = line.strip_prefix("import ") {
            rest.split(',')
                .filter_map(|part| part.split_whitespace().next())
                .collect()
        } else if let Some(rest) = line.strip_prefix("from ") {
            rest.split_whitespace().next().into_iter().collect()
        } else {
            Vec::new()
        };
        for module in named {
            if !modules.contains(&module) {
                modules.push(module);
            }
        }
    }
    modules
}

/// [`imported_modules`] of [`STANDARD_IMPORTS`], worked out once per process (every judge
/// functional plan names them).
pub fn standard_modules() -> &'static [&'static str] {
    static MODULES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    MODULES.get_or_init(|| imported_modules(STANDARD_IMPORTS))
}

/// [`imported_modules`] of [`REFERENCE_IMPORTS`], worked out once per process.
pub fn reference_modules() -> &'static [&'static str] {
    static MODULES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    MODULES.get_or_init(|| imported_modules(REFERENCE_IMPORTS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn import_blocks_name_their_modules_once_in_order() {
        assert_eq!(
            imported_modules(STANDARD_IMPORTS),
            [
                "bisect",
                "collections",
                "copy",
                "datetime",
                "functools",
                "heapq",
                "io",
                "itertools",
                "math",
                "operator",
                "os",
                "random",
                "re",
                "string",
                "sys",
                "os.path",
                "time",
                "typing"
            ]
        );
        let reference = imported_modules(REFERENCE_IMPORTS);
        assert_eq!(reference.first(), Some(&"itertools"));
        assert!(reference.contains(&"numpy") && reference.contains(&"pandas"));
        assert!(!reference.contains(&"np") && !reference.contains(&"search"));
    }
}
